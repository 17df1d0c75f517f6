"""Port of the ReplicationController-based [Conformance] test of
test/e2e/storage/empty_dir_wrapper.go (kubernetes/kubernetes v1.32): "EmptyDir wrapper
volumes should not cause race condition when used for configmaps [Serial]".

It creates 50 ConfigMaps, then three times a ReplicationController of 5 pause pods pinned
(required node affinity on kubernetes.io/hostname) to a random ready node, each pod mounting
all 50 ConfigMaps as volumes, and waits for every pod to run. It needs
shepherd-controller-manager's ReplicationController controller and garbage collector, the
scheduler and the two nodes (conftest.py): the pods run for real, kubelet-lite writes the
configmap volumes.

As upstream (ginkgo.DeferCleanup), every RC is deleted at the end of the test, after the
three iterations and in reverse order (e2erc.DeleteRCAndWaitForGC each), then the
ConfigMaps; so up to 15 such pods run at once.

Image: imageutils.Pause is the same reference here (PAUSE_IMAGE, built offline).

The other [Conformance] test of the file, "should not conflict", needs no
ReplicationController and is not part of this port.
"""

from kubernetes import client

from e2e_framework import (PAUSE_IMAGE, by, conformance, expect_no_error, fail, new_uuid,
                           wait_for_pod_name_running)
from e2e_rc import delete_rc_and_wait_for_gc, get_random_ready_schedulable_node, pods_created

# These numbers are obtained empirically. If you make them too low, you'll get flaky tests
# instead of failing ones if the race bug reappears. If you make volume counts or pod counts
# too high, the tests may fail because mounting configmap/git_repo volumes is not very fast
# and the tests may time out waiting for pods to become Running. And of course the higher
# are the numbers, the slower are the tests.
WRAPPED_VOLUME_RACE_CONFIGMAP_VOLUME_COUNT = 50
WRAPPED_VOLUME_RACE_CONFIGMAP_POD_COUNT = 5
WRAPPED_VOLUME_RACE_CONFIGMAP_ITERATION_COUNT = 3
WRAPPED_VOLUME_RACE_RC_NAME_PREFIX = "wrapped-volume-race-"


def create_configmaps_for_race(f):
    """createConfigmapsForRace"""
    by("Creating %d configmaps" % WRAPPED_VOLUME_RACE_CONFIGMAP_VOLUME_COUNT)
    names = []
    ns = f.namespace.metadata.name
    for i in range(WRAPPED_VOLUME_RACE_CONFIGMAP_VOLUME_COUNT):
        name = "racey-configmap-%d" % i
        names.append(name)
        config_map = client.V1ConfigMap(
            metadata=client.V1ObjectMeta(namespace=ns, name=name),
            data={"data-1": "value-1"})
        expect_no_error(f.core.create_namespaced_config_map, ns, config_map)
    return names


def delete_config_maps(f, names):
    """deleteConfigMaps"""
    by("Cleaning up the configMaps")
    ns = f.namespace.metadata.name
    for name in names:
        expect_no_error(f.core.delete_namespaced_config_map, name, ns,
                        explain="unable to delete configMap %s" % name)


def make_config_map_volumes(names):
    """makeConfigMapVolumes"""
    volumes, mounts = [], []
    for i, name in enumerate(names):
        volume_name = "racey-configmap-%d" % i
        volumes.append(client.V1Volume(
            name=volume_name,
            config_map=client.V1ConfigMapVolumeSource(
                name=name, items=[client.V1KeyToPath(key="data-1", path="data-1")])))
        mounts.append(client.V1VolumeMount(name=volume_name, mount_path="/etc/config-%d" % i))
    return volumes, mounts


def no_wrapped_volume_race(f, volumes, volume_mounts, pod_count, defer_cleanup):
    """testNoWrappedVolumeRace (named so pytest does not collect it)"""
    node_hostname_label_key = "kubernetes.io/hostname"
    ns = f.namespace.metadata.name

    rc_name = WRAPPED_VOLUME_RACE_RC_NAME_PREFIX + new_uuid()
    target_node, err = get_random_ready_schedulable_node(f.core)
    if err is not None:
        fail("unexpected error: %s", err)

    by("Creating RC which spawns configmap-volume pods")
    affinity = client.V1Affinity(node_affinity=client.V1NodeAffinity(
        required_during_scheduling_ignored_during_execution=client.V1NodeSelector(
            node_selector_terms=[client.V1NodeSelectorTerm(match_expressions=[
                client.V1NodeSelectorRequirement(
                    key=node_hostname_label_key, operator="In",
                    values=[(target_node.metadata.labels or {}).get(
                        node_hostname_label_key, "")])])])))

    rc = client.V1ReplicationController(
        metadata=client.V1ObjectMeta(name=rc_name),
        spec=client.V1ReplicationControllerSpec(
            replicas=pod_count,
            selector={"name": rc_name},
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels={"name": rc_name}),
                spec=client.V1PodSpec(
                    containers=[client.V1Container(name="test-container", image=PAUSE_IMAGE,
                                                   volume_mounts=volume_mounts)],
                    affinity=affinity, dns_policy="Default", volumes=volumes))))
    expect_no_error(f.core.create_namespaced_replication_controller, ns, rc,
                    explain="error creating replication controller")

    def cleanup():
        err = delete_rc_and_wait_for_gc(f.core, ns, rc_name)
        if err is not None:
            fail("unexpected error: %s", err)

    defer_cleanup(cleanup)  # ginkgo.DeferCleanup(e2erc.DeleteRCAndWaitForGC, ...)

    pods, err = pods_created(f.core, ns, rc_name, pod_count)
    if err is not None:
        fail("error creating pods: %s", err)

    by("Ensuring each pod is running")

    # Wait for the pods to enter the running state. Waiting loops until the pods are running
    # so non-running pods cause a timeout for this test.
    for pod in pods.items:
        if pod.metadata.deletion_timestamp is not None:
            continue
        err = wait_for_pod_name_running(f.core, pod.metadata.name, ns)
        if err is not None:
            fail("Failed waiting for pod %s to enter running state: %s", pod.metadata.name, err)


# Release: v1.13
# Testname: EmptyDir Wrapper Volume, ConfigMap volumes, no race
# Description: Create 50 ConfigMaps Volumes and 5 replicas of pod with these ConfigMapvolumes
# mounted. Pod MUST NOT fail waiting for Volumes.
@conformance("[sig-storage] EmptyDir wrapper volumes should not cause race condition when used "
             "for configmaps [Serial] [Conformance]")
def test_emptydir_wrapper_no_race_for_configmaps(new_framework):
    f = new_framework("emptydir-wrapper", "baseline")
    cleanups = []  # ginkgo.DeferCleanup: run last-in first-out after the test body
    try:
        config_map_names = create_configmaps_for_race(f)
        cleanups.append(lambda: delete_config_maps(f, config_map_names))
        volumes, volume_mounts = make_config_map_volumes(config_map_names)
        for _ in range(WRAPPED_VOLUME_RACE_CONFIGMAP_ITERATION_COUNT):
            no_wrapped_volume_race(f, volumes, volume_mounts,
                                        WRAPPED_VOLUME_RACE_CONFIGMAP_POD_COUNT,
                                        cleanups.append)
    finally:
        errors = []
        while cleanups:
            try:
                cleanups.pop()()
            except BaseException as err:  # pytest.fail's exception is not an Exception
                errors.append(str(err))
        if errors:
            fail("; ".join(errors))
