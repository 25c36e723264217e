#include <core.p4>
#include <v1model.p4>

struct headers { }
struct metadata { }

control I(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
