"""Port of test/e2e/node/pods.go (kubernetes/kubernetes), the [Conformance] test "Pods Set QOS
Class should be set on Pods with matching resource requests and limits for memory and cpu"."""

from kubernetes import client

from e2e_framework import by, conformance, expect_no_error, new_uuid

# imageutils.GetE2EImage(imageutils.Agnhost): the pod is only created and read back (no node
# runs it in Tier A), so the upstream image reference is kept unchanged.
AGNHOST_IMAGE = "registry.k8s.io/e2e-test-images/agnhost:2.53"


@conformance("[sig-node] Pods Extended Pods Set QOS Class should be set on Pods with matching "
             "resource requests and limits for memory and cpu [Conformance]")
def test_pod_qos_class_guaranteed(new_framework):
    f = new_framework("pods", "baseline")
    ns = f.namespace.metadata.name
    pod_client = f.core  # e2epod.NewPodClient(f)

    by("creating the pod")
    name = "pod-qos-class-" + new_uuid()
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels={"name": name}),
        spec=client.V1PodSpec(containers=[client.V1Container(
            name="agnhost",
            image=AGNHOST_IMAGE,
            args=["pause"],
            resources=client.V1ResourceRequirements(
                limits={"cpu": "100m", "memory": "100Mi"},
                requests={"cpu": "100m", "memory": "100Mi"}),
        )]))

    by("submitting the pod to kubernetes")
    expect_no_error(pod_client.create_namespaced_pod, ns, pod, explain="Error creating Pod")

    by("verifying QOS class is set on the pod")
    pod = expect_no_error(pod_client.read_namespaced_pod, name, ns,
                          explain="failed to query for pod")
    assert pod.status is not None and pod.status.qos_class == "Guaranteed", \
        "expected status.qosClass Guaranteed, got %r" % (pod.status.qos_class
                                                         if pod.status else None)
