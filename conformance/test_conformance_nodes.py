"""Port of the Conformance Tests [Conformance] test of test/e2e/architecture/conformance.go
(kubernetes/kubernetes) "should have at least two untainted nodes".

The session's cluster has two real worker nodes (conftest.py).
"""

from e2e_framework import (by, conformance, fail, get_ready_schedulable_nodes,
                           wait_for_all_nodes_schedulable)


# Release: v1.23
# Testname: Conformance tests minimum number of nodes.
# Description: Conformance tests requires at least two untainted nodes where pods can be
# scheduled.
@conformance("[sig-architecture] Conformance Tests should have at least two untainted nodes "
             "[Conformance]")
def test_conformance_at_least_two_untainted_nodes(new_framework):
    # SIGDescribe("Conformance Tests"): NewDefaultFramework("conformance-tests"), privileged
    f = new_framework("conformance-tests", "privileged")
    by("Getting node addresses")
    err = wait_for_all_nodes_schedulable(f.core, 10 * 60)
    if err is not None:
        fail("unexpected error: %s", err)
    node_list, err = get_ready_schedulable_nodes(f.core)
    if err is not None:
        fail("unexpected error: %s", err)
    if len(node_list.items) < 2:
        fail("Conformance requires at least two nodes")
