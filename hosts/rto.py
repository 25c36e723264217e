"""The retransmission timeout of a worker, estimated as TCP does (RFC 6298).

A sample is the time from sending a wire chunk to receiving its RESULT, taken only
for chunks that were sent once (Karn's rule: the RESULT of a retransmitted chunk
could answer either copy). From the samples::

    first:  SRTT = R,  RTTVAR = R / 2
    then:   RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|,  SRTT = 7/8 SRTT + 1/8 R
    RTO = min(SRTT + max(min_timeout, 4 RTTVAR), max_timeout)

RFC 6298 writes the margin as max(G, 4 RTTVAR), G the clock granularity; here G is
``min_timeout``, which also makes it the least RTO (as Linux's ``rto_min`` does). A
fixed floor under SRTT + 4 RTTVAR would not do: on a shaped link the RTT of a full
window is nearly constant, RTTVAR decays towards zero and the RTO to SRTT itself, and
then a single packet more in the queue (a retransmission) makes every later chunk
overdue, a cascade of spurious retransmissions.

Before the first sample the RTO is the configured ``timeout``. A timeout that says the
RTO itself is too short backs it off (``back_off``) and the backed-off value stays until
the next sample, so a run of such timeouts keeps doubling it (up to ``max_timeout``)
rather than falling back. Which timeouts say so is the protocol's business
(``hosts.protocol``: only those of a chunk that nothing sent after it has overtaken).

The RTT of a chunk includes waiting for the slowest worker's contribution and the
packets queued ahead of it on the links: with a window of S chunks in flight the
queue alone is S packets' transmission time, which on slow links is far above any
fixed default. With ``adaptive`` off the estimator still measures SRTT (for the
stats) but the RTO stays at ``timeout``, the behaviour before this module existed.
"""

from __future__ import annotations

from collections.abc import Sequence

ALPHA = 1 / 8
BETA = 1 / 4
K_VAR = 4


class RtoEstimator:
    """SRTT, RTTVAR and the current RTO (seconds) of one worker, kept across runs."""

    __slots__ = ("adaptive", "max_timeout", "min_timeout", "rto", "rttvar", "samples",
                 "srtt")

    def __init__(self, timeout: float, min_timeout: float, max_timeout: float,
                 adaptive: bool = True) -> None:
        """``timeout``: the RTO before the first sample; ``min_timeout``: the least
        margin above SRTT (and so the least RTO); ``max_timeout``: the largest RTO."""
        self.adaptive = adaptive
        self.min_timeout = min_timeout
        self.max_timeout = max_timeout
        self.rto: float = timeout
        self.srtt: float | None = None
        self.rttvar = 0.0
        self.samples = 0

    def sample(self, rtt: float) -> None:
        """A fresh RTT measurement (of a chunk that was not retransmitted)."""
        self.sample_many((rtt,))

    def sample_many(self, rtts: Sequence[float]) -> None:
        """Fresh RTT measurements, oldest first: the same as ``sample`` for each."""
        if not rtts:
            return
        srtt, rttvar = self.srtt, self.rttvar
        for rtt in rtts:
            if srtt is None:
                srtt = rtt
                rttvar = rtt / 2
            else:
                rttvar += BETA * (abs(srtt - rtt) - rttvar)
                srtt += ALPHA * (rtt - srtt)
        assert srtt is not None
        self.srtt, self.rttvar = srtt, rttvar
        self.samples += len(rtts)
        if self.adaptive:
            self.rto = min(srtt + max(self.min_timeout, K_VAR * rttvar), self.max_timeout)

    def back_off(self, timeout: float) -> None:
        """A slot timed out because the RTO is too short and waits ``timeout`` (its
        backed-off RTO) for the resent packet: later packets get at least that much
        until a fresh sample arrives. Taking the maximum (not doubling once per
        expiry) makes a burst of slots expiring together one backoff step, as TCP's
        single timer would."""
        if self.adaptive and timeout > self.rto:
            self.rto = timeout
