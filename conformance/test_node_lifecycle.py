"""Port of test/e2e/node/node_lifecycle.go (kubernetes/kubernetes), the [Conformance] test
"should run through the lifecycle of a node"."""

import time

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import (by, conformance, describe_error, expect_no_error, fail,
                           is_not_found, rand_string, retry_on_conflict)


@conformance("[sig-node] Node Lifecycle should run through the lifecycle of a node "
             "[Conformance]")
def test_node_lifecycle(new_framework):
    f = new_framework("fake-node", "privileged")
    # the scope of this test only covers the api-server

    node_client = f.core

    # Create a fake node with a ready condition but unschedulable, so it won't be selected by
    # the scheduler and won't be deleted by the cloud controller manager when the test runs on
    # a specific cloud provider.
    fake_node = client.V1Node(
        metadata=client.V1ObjectMeta(name="e2e-fake-node-" + rand_string(5)),
        spec=client.V1NodeSpec(unschedulable=True),
        status=client.V1NodeStatus(
            phase="Running",
            conditions=[client.V1NodeCondition(status="True", message="Set from e2e test",
                                               reason="E2E", type="Ready")]))
    name = fake_node.metadata.name

    by('Create "%s"' % name)
    created_node = expect_no_error(node_client.create_node, fake_node,
                                   explain='failed to create node "%s"' % name)
    assert created_node.metadata.name == name, "Checking that the node has been created"

    by('Getting "%s"' % name)
    retrieved_node = expect_no_error(node_client.read_node, name,
                                     explain='Failed to retrieve Node "%s"' % name)
    assert retrieved_node.metadata.name == name, \
        "Checking that the retrieved name has been found"

    by('Patching "%s"' % name)
    payload = {"metadata": {"labels": {name: "patched"}}}
    patched_node = expect_no_error(node_client.patch_node, name, payload,
                                   explain='Failed to patch "%s"' % name)  # strategic merge
    assert (patched_node.metadata.labels or {}).get(name) == "patched", \
        "Checking that patched label has been applied"
    patched_selector = "%s=patched" % name  # labels.Set{...}.AsSelector().String()

    by('Listing nodes with LabelSelector "%s"' % patched_selector)
    nodes = expect_no_error(node_client.list_node, label_selector=patched_selector,
                            explain="failed to list nodes")
    assert len(nodes.items) == 1, "confirm that the patched node has been found"

    by('Updating "%s"' % name)

    def update():
        tmp_node = expect_no_error(node_client.read_node, name,
                                   explain='Unable to get "%s"' % name)
        tmp_node.metadata.labels[name] = "updated"
        return node_client.replace_node(name, tmp_node)

    updated_node = expect_no_error(retry_on_conflict, update,
                                   explain='failed to update "%s"' % name)
    assert (updated_node.metadata.labels or {}).get(name) == "updated", \
        "Checking that updated label has been applied"

    by('Delete "%s"' % name)
    expect_no_error(node_client.delete_node, name, explain="failed to delete node")

    by('Confirm deletion of "%s"' % name)
    # gomega.Eventually(..., 3*time.Minute, 5*time.Second): polls at once, then every 5s.
    deadline = time.monotonic() + 180
    while True:
        try:
            node_client.read_node(name)
            last = "node still exists: %s" % name
        except ApiException as err:
            if is_not_found(err):
                return
            last = "nodeClient.Get returned an unexpected error: %s" % describe_error(err)
        if time.monotonic() + 5 > deadline:
            fail("Timeout while waiting to confirm Node deletion: %s", last)
        time.sleep(5)
