"""PTF tests of p4/ipv4_forward.p4, run by PTF against ``ina switch`` on veth pairs as
p4lang's own PTF tests run against simple_switch_grpc (``test_ptf.py`` starts both).

Test parameters (``--test-params``): ``grpcaddr``, ``device_id``, ``p4info`` and
``config`` (``ina p4c`` output). Each test pushes the program over P4Runtime with the
project's controller client, so it starts from empty tables.
"""

import ptf
import ptf.testutils as tu
from ptf.base_tests import BaseTest

from controller import P4RuntimeClient, TableEntry

HOST_MAC = "00:00:00:00:00:01"
SWITCH_MAC = "00:00:00:00:00:fe"


class Ipv4ForwardBase(BaseTest):
    def setUp(self):
        BaseTest.setUp(self)
        self.dataplane = ptf.dataplane_instance
        self.dataplane.flush()
        self.client = P4RuntimeClient(tu.test_param_get("grpcaddr"),
                                      int(tu.test_param_get("device_id")), (0, 1)).connect()
        self.client.set_pipeline(tu.test_param_get("p4info"), tu.test_param_get("config"))

    def tearDown(self):
        self.client.close()
        BaseTest.tearDown(self)

    def route(self, prefix, port, dst_mac):
        self.client.insert(TableEntry("ForwardIngress.ipv4_lpm",
                                      {"hdr.ipv4.dst_addr": prefix},
                                      "ForwardIngress.forward",
                                      {"port": port, "dst_mac": dst_mac}))


class DropsWithoutARoute(Ipv4ForwardBase):
    def runTest(self):
        pkt = tu.simple_tcp_packet(eth_src=HOST_MAC, eth_dst=SWITCH_MAC, ip_dst="10.0.2.7")
        tu.send_packet(self, 1, pkt)
        tu.verify_no_other_packets(self)


class ForwardsByLongestPrefix(Ipv4ForwardBase):
    def runTest(self):
        self.route("10.0.0.0/8", 2, "00:00:00:00:02:02")
        self.route("10.0.2.0/24", 3, "00:00:00:00:03:03")
        for dst, port, mac in (("10.0.2.7", 3, "00:00:00:00:03:03"),
                               ("10.9.9.9", 2, "00:00:00:00:02:02")):
            pkt = tu.simple_tcp_packet(eth_src=HOST_MAC, eth_dst=SWITCH_MAC, ip_dst=dst,
                                       ip_ttl=64)
            exp = tu.simple_tcp_packet(eth_src=SWITCH_MAC, eth_dst=mac, ip_dst=dst,
                                       ip_ttl=63)
            tu.send_packet(self, 1, pkt)
            tu.verify_packets(self, exp, [port])


class DropsAnExpiringTtl(Ipv4ForwardBase):
    def runTest(self):
        self.route("10.0.2.0/24", 2, "00:00:00:00:02:02")
        pkt = tu.simple_tcp_packet(eth_src=HOST_MAC, eth_dst=SWITCH_MAC, ip_dst="10.0.2.7",
                                   ip_ttl=1)
        tu.send_packet(self, 1, pkt)
        tu.verify_no_other_packets(self)
