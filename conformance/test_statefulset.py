"""Ports of the StatefulSet [Conformance] tests of test/e2e/apps/statefulset.go
(kubernetes/kubernetes, v1.32), all in "[sig-apps] StatefulSet Basic StatefulSet functionality
[StatefulSetBasic]": "should perform rolling updates and roll backs of template
modifications", "should perform canary updates and phased rolling updates of template
modifications", "Scaling should happen in predictable order and halt if any stateful pod is
unhealthy [Slow]", "Burst scaling should run to completion even with unhealthy pods [Slow]",
"Should recreate evicted statefulset", "should have a working scale subresource", "should
list, patch and delete a collection of StatefulSets" and "should validate Statefulset Status
endpoints", with the Describe's BeforeEach (the headless Service "test") and AfterEach
(DumpDebugInfo when the test failed, then e2estatefulset.DeleteAllStatefulSets). The helpers
(test/e2e/framework/statefulset, test/e2e/apps/wait.go and statefulset.go's own) are in
e2e_statefulset.py.

None of these tests uses volume claims: each builds its set with
``NewStatefulSet(..., nil, nil, labels)``; only the BeforeEach's unused ``ss`` has the
"datadir" claim template and the "home" hostPath mount (it is built, never sent).

They need shepherd-controller-manager's StatefulSet controller, the scheduler and the two
nodes (conftest.py): the pods run for real, their readiness probes are real HTTP GETs, and
the tests break and restore them with the real kubectl (/usr/bin/kubectl, 1.32;
SHEPHERD_KUBECTL overrides) running ``kubectl exec POD -- /bin/sh -x -c CMD``, as
e2eoutput.RunHostCmd does, with the cluster admin's kubeconfig.

Image substitutions (see e2e_statefulset.py): imageutils.Httpd becomes busybox:1.36 running
busybox httpd on port 80 with /usr/local/apache2/htdocs/index.html as httpd's image has it;
NewWebserverImage (imageutils.HttpdNew) becomes busybox:latest with the same command;
imageutils.Pause is upstream's reference. The "evicted" test's plain conflicting pod runs
the same httpd stand-in.

Deviations: the Describe's AfterEach fails at once, with upstream's error texts, when the
server does not serve PersistentVolumeClaims / PersistentVolumes at all instead of polling
10 minutes each (e2e_statefulset.py's module doc). The status test's second watch is
cancelled by upstream after its first event and its result is not checked; the port reads
one event and ignores the result too.
"""

import json
import os
import shutil
import tempfile
import time

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import (by, conformance, describe_error, expect_no_error, fail, logf, raw_call,
                           retry_on_conflict, selector_from_set, to_model, wait_for_pod_name_running,
                           watch_until)
from e2e_rc import get_random_ready_schedulable_node
from e2e_statefulset import (NEW_WEBSERVER_IMAGE, PAUSE, STATEFUL_POD_TIMEOUT,
                             STATEFUL_SET_REVISION_LABEL, STATEFUL_SET_TIMEOUT, WEBSERVER_IMAGE,
                             WEBSERVER_IMAGE_NAME, GoRoutine, Kubectl, break_http_probe,
                             confirm_stateful_pod_count, create_service_spec,
                             delete_all_stateful_sets, delete_stateful_pod_at_index,
                             dump_debug_info, expect_equal, expect_no_err, expect_not_equal,
                             get_pod_list, get_stateful_set, new_stateful_set, partition_of,
                             pod_label, pod_phase, replicas_of, restore_http_probe, rollback_test,
                             scale, set_http_probe, status_field, update_replicas,
                             update_stateful_set_with_retries, wait_for_partitioned_rolling_update,
                             wait_for_running_and_not_ready, wait_for_running_and_ready,
                             wait_for_status, wait_for_status_ready_replicas,
                             wait_for_status_replicas, webserver_container,
                             write_admin_kubeconfig)

SS_NAME = "ss"                              # ssName
LABELS = {"foo": "bar", "baz": "blah"}      # labels
HEADLESS_SVC_NAME = "test"                  # headlessSvcName


@pytest.fixture(scope="module")
def kubectl(shepherd):
    """A Kubectl (e2ekubectl) for the session's server, as the cluster admin."""
    workdir = tempfile.mkdtemp(prefix="shepherd-kubectl-")
    try:
        kubeconfig = write_admin_kubeconfig(
            os.path.join(workdir, "kubeconfig"), shepherd.base_url,
            os.path.join(shepherd.pki_dir, "ca.crt"), os.path.join(shepherd.pki_dir, "admin.crt"),
            os.path.join(shepherd.pki_dir, "admin.key"))
        home = os.path.join(workdir, "home")
        os.makedirs(home)
        yield Kubectl(shepherd.base_url, kubeconfig, home)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


class _Describe:
    """SIGDescribe("StatefulSet") (NewDefaultFramework("statefulset"), pod security level
    privileged) and its Describe("Basic StatefulSet functionality [StatefulSetBasic]"):
    the BeforeEach at construction, the AfterEach in ``run``."""

    def __init__(self, new_framework, kubectl):
        self.f = new_framework("statefulset", "privileged")
        self.c = self.f.core
        self.ns = self.f.namespace.metadata.name
        self.apps = client.AppsV1Api(self.f.api_client)
        self.kubectl = kubectl
        # BeforeEach
        self.stateful_pod_mounts = [client.V1VolumeMount(name="datadir", mount_path="/data/")]
        self.pod_mounts = [client.V1VolumeMount(name="home", mount_path="/home")]
        self.ss = new_stateful_set(SS_NAME, self.ns, HEADLESS_SVC_NAME, 2,
                                   self.stateful_pod_mounts, self.pod_mounts, LABELS)
        by("Creating service " + HEADLESS_SVC_NAME + " in namespace " + self.ns)
        headless_service = create_service_spec(HEADLESS_SVC_NAME, "", True, LABELS)
        expect_no_error(self.c.create_namespaced_service, self.ns, headless_service)

    def after_each(self, failed):
        if failed:
            dump_debug_info(self.c, self.kubectl, self.ns)
        logf("Deleting all statefulset in ns %s", self.ns)
        delete_all_stateful_sets(self.apps, self.c, self.f.api_client, self.ns)

    def run(self, body):
        """The It body, then the AfterEach (a failing body is reported first; after a
        conftest test timeout the AfterEach is skipped, the namespace deletion cleans up)."""
        try:
            body()
        except BaseException as err:
            if type(err).__name__ == "_TestTimeout":
                raise
            try:
                self.after_each(True)
            except BaseException as after_err:
                logf("AfterEach failed too: %s", after_err)
            raise
        logf("The test body passed; running the AfterEach")
        after_err = None
        try:
            self.after_each(False)
        except BaseException as err:
            if type(err).__name__ == "_TestTimeout":
                raise
            after_err = str(err)
        if after_err is not None:
            fail("[AfterEach] (the It body passed) %s", after_err)


def _pods_at_revisions(pods, partition, old_image, new_image, current_revision,
                       update_revision):
    """The check the canary test repeats: pods (in list order) below the partition at the
    old image and current revision, the others at the new image and update revision."""
    for i, p in enumerate(pods.items):
        if i < partition:
            expect_equal(p.spec.containers[0].image, old_image,
                         "Pod %s/%s has image %s not equal to current image %s" % (
                             p.metadata.namespace, p.metadata.name, p.spec.containers[0].image,
                             old_image))
            expect_equal(pod_label(p, STATEFUL_SET_REVISION_LABEL), current_revision,
                         "Pod %s/%s has revision %s not equal to current revision %s" % (
                             p.metadata.namespace, p.metadata.name,
                             pod_label(p, STATEFUL_SET_REVISION_LABEL), current_revision))
        else:
            expect_equal(p.spec.containers[0].image, new_image,
                         "Pod %s/%s has image %s not equal to new image  %s" % (
                             p.metadata.namespace, p.metadata.name, p.spec.containers[0].image,
                             new_image))
            expect_equal(pod_label(p, STATEFUL_SET_REVISION_LABEL), update_revision,
                         "Pod %s/%s has revision %s not equal to new revision %s" % (
                             p.metadata.namespace, p.metadata.name,
                             pod_label(p, STATEFUL_SET_REVISION_LABEL), update_revision))


def _partition_strategy(partition):
    return client.V1StatefulSetUpdateStrategy(
        type="RollingUpdate",
        rolling_update=client.V1RollingUpdateStatefulSetStrategy(partition=partition))


#   Release: v1.9
#   Testname: StatefulSet, Rolling Update
#   Description: StatefulSet MUST support the RollingUpdate strategy to automatically replace
#   Pods one at a time when the Pod template changes. The StatefulSet's status MUST indicate
#   the CurrentRevision and UpdateRevision. If the template is changed to match a prior
#   revision, StatefulSet MUST detect this as a rollback instead of creating a new revision.
#   This test does not depend on a preexisting default StorageClass or a dynamic provisioner.
@conformance("[sig-apps] StatefulSet Basic StatefulSet functionality [StatefulSetBasic] should "
             "perform rolling updates and roll backs of template modifications [Conformance]")
@pytest.mark.test_timeout(900)  # two ordered 3-pod rollouts at upstream's 10 s polls
def test_rolling_updates_and_roll_backs(new_framework, kubectl):
    """ConformanceIt("should perform rolling updates and roll backs of template
    modifications"): NewStatefulSet("ss2", 3 replicas, no mounts), then rollbackTest."""
    d = _Describe(new_framework, kubectl)

    def body():
        by("Creating a new StatefulSet")
        ss = new_stateful_set("ss2", d.ns, HEADLESS_SVC_NAME, 3, None, None, LABELS)
        rollback_test(d.apps, d.c, d.kubectl, d.ns, ss)

    d.run(body)


#   Release: v1.9
#   Testname: StatefulSet, Rolling Update with Partition
#   Description: StatefulSet's RollingUpdate strategy MUST support the Partition parameter for
#   canaries and phased rollouts. If a Pod is deleted while a rolling update is in progress,
#   StatefulSet MUST restore the Pod without violating the Partition. This test does not
#   depend on a preexisting default StorageClass or a dynamic provisioner.
@conformance("[sig-apps] StatefulSet Basic StatefulSet functionality [StatefulSetBasic] should "
             "perform canary updates and phased rolling updates of template modifications "
             "[Conformance]")
@pytest.mark.test_timeout(900)  # four partition steps, each waited for at 10 s polls
def test_canary_and_phased_rolling_updates(new_framework, kubectl):
    """ConformanceIt("should perform canary updates and phased rolling updates of template
    modifications")"""
    d = _Describe(new_framework, kubectl)
    c, apps, ns = d.c, d.apps, d.ns

    def body():
        by("Creating a new StatefulSet")
        ss = new_stateful_set("ss2", ns, HEADLESS_SVC_NAME, 3, None, None, LABELS)
        set_http_probe(ss)
        ss.spec.update_strategy = _partition_strategy(3)
        ss = expect_no_error(apps.create_namespaced_stateful_set, ns, ss)
        wait_for_running_and_ready(c, replicas_of(ss), ss)
        ss = wait_for_status(apps, c, ss)
        current_revision, update_revision = status_field(ss, "current_revision", ""), \
            status_field(ss, "update_revision", "")
        expect_equal(current_revision, update_revision,
                     "StatefulSet %s/%s created with update revision %s not equal to current "
                     "revision %s" % (ss.metadata.namespace, ss.metadata.name, update_revision,
                                      current_revision))
        pods = get_pod_list(c, ss)
        for p in pods.items:
            expect_equal(pod_label(p, STATEFUL_SET_REVISION_LABEL), current_revision,
                         "Pod %s/%s revision %s is not equal to currentRevision %s" % (
                             p.metadata.namespace, p.metadata.name,
                             pod_label(p, STATEFUL_SET_REVISION_LABEL), current_revision))
        new_image = NEW_WEBSERVER_IMAGE
        old_image = ss.spec.template.spec.containers[0].image

        by("Updating stateful set template: update image from %s to %s" % (old_image,
                                                                           new_image))
        expect_not_equal(old_image, new_image,
                         "Incorrect test setup: should update to a different image")

        def set_new_image(u):
            u.spec.template.spec.containers[0].image = new_image

        ss, err = update_stateful_set_with_retries(apps, ns, ss.metadata.name, set_new_image)
        expect_no_err(err)

        by("Creating a new revision")
        ss = wait_for_status(apps, c, ss)
        current_revision, update_revision = status_field(ss, "current_revision", ""), \
            status_field(ss, "update_revision", "")
        expect_not_equal(current_revision, update_revision,
                         "Current revision should not equal update revision during rolling "
                         "update")

        by("Not applying an update when the partition is greater than the number of replicas")
        for p in pods.items:  # (the list from before the update, as upstream)
            expect_equal(p.spec.containers[0].image, old_image,
                         "Pod %s/%s has image %s not equal to current image %s" % (
                             p.metadata.namespace, p.metadata.name, p.spec.containers[0].image,
                             old_image))
            expect_equal(pod_label(p, STATEFUL_SET_REVISION_LABEL), current_revision,
                         "Pod %s/%s has revision %s not equal to current revision %s" % (
                             p.metadata.namespace, p.metadata.name,
                             pod_label(p, STATEFUL_SET_REVISION_LABEL), current_revision))

        by("Performing a canary update")
        ss.spec.update_strategy = _partition_strategy(2)

        def set_partition_2(u):
            u.spec.update_strategy = _partition_strategy(2)

        ss, err = update_stateful_set_with_retries(apps, ns, ss.metadata.name, set_partition_2)
        expect_no_err(err)
        ss, pods = wait_for_partitioned_rolling_update(apps, c, ss)
        _pods_at_revisions(pods, partition_of(ss), old_image, new_image, current_revision,
                           update_revision)

        by("Restoring Pods to the correct revision when they are deleted")
        delete_stateful_pod_at_index(c, 0, ss)
        delete_stateful_pod_at_index(c, 2, ss)
        wait_for_running_and_ready(c, 3, ss)
        ss = get_stateful_set(apps, ss.metadata.namespace, ss.metadata.name)
        pods = get_pod_list(c, ss)
        _pods_at_revisions(pods, partition_of(ss), old_image, new_image, current_revision,
                           update_revision)

        by("Performing a phased rolling update")
        for i in range(partition_of(ss) - 1, -1, -1):
            def set_partition(u, j=i):
                u.spec.update_strategy = _partition_strategy(j)

            ss, err = update_stateful_set_with_retries(apps, ns, ss.metadata.name, set_partition)
            expect_no_err(err)
            ss, pods = wait_for_partitioned_rolling_update(apps, c, ss)
            _pods_at_revisions(pods, partition_of(ss), old_image, new_image, current_revision,
                               update_revision)
        expect_equal(status_field(ss, "current_revision", ""), update_revision,
                     "StatefulSet %s/%s current revision %s does not equal update revision %s "
                     "on update completion" % (ss.metadata.namespace, ss.metadata.name,
                                               status_field(ss, "current_revision", ""),
                                               update_revision))

    d.run(body)


def _pod_order_watch(c, ns, selector, pl, event_type, expected_order):
    """The goroutine of the Scaling test: watchtools.Until(statefulSetTimeout, from the
    list's resourceVersion) over the pods matching the selector, until events of
    `event_type` have named the pods of expected_order in that order (others may come in
    between). Returns orderErr (error text or None)."""
    expected_order = list(expected_order)

    def condition(event):
        if event["type"] != event_type:
            return False, None
        pod = event["object"]
        if pod.metadata.name == expected_order[0]:
            expected_order.pop(0)
        return len(expected_order) == 0, None

    _, err = watch_until(STATEFUL_SET_TIMEOUT, pl.metadata.resource_version,
                         c.list_namespaced_pod, ns, label_selector=selector,
                         conditions=[condition])
    return err


#   Release: v1.9
#   Testname: StatefulSet, Scaling
#   Description: StatefulSet MUST create Pods in ascending order by ordinal index when scaling
#   up, and delete Pods in descending order when scaling down. Scaling up or down MUST pause
#   if any Pods belonging to the StatefulSet are unhealthy. This test does not depend on a
#   preexisting default StorageClass or a dynamic provisioner.
@conformance("[sig-apps] StatefulSet Basic StatefulSet functionality [StatefulSetBasic] Scaling "
             "should happen in predictable order and halt if any stateful pod is unhealthy "
             "[Slow] [Conformance]")
@pytest.mark.test_timeout(900)  # ordered scale up and down, each step seen at 10 s polls
def test_scaling_predictable_order(new_framework, kubectl):
    """ConformanceIt("Scaling should happen in predictable order and halt if any stateful pod
    is unhealthy [Slow]")"""
    d = _Describe(new_framework, kubectl)
    c, apps, ns = d.c, d.apps, d.ns

    def body():
        ps_labels = dict(LABELS)
        selector = selector_from_set(ps_labels)
        by("Initializing watcher for selector " + selector)
        pl = expect_no_error(c.list_namespaced_pod, ns, label_selector=selector)

        # Verify that stateful set will be scaled up in order.
        wg = GoRoutine(lambda: _pod_order_watch(c, ns, selector, pl, "ADDED",
                                                [SS_NAME + "-0", SS_NAME + "-1",
                                                 SS_NAME + "-2"]))

        by("Creating stateful set " + SS_NAME + " in namespace " + ns)
        ss = new_stateful_set(SS_NAME, ns, HEADLESS_SVC_NAME, 1, None, None, ps_labels)
        set_http_probe(ss)
        ss = expect_no_error(apps.create_namespaced_stateful_set, ns, ss)

        by("Waiting until all stateful set " + SS_NAME + " replicas will be running in "
           "namespace " + ns)
        wait_for_running_and_ready(c, replicas_of(ss), ss)

        by("Confirming that stateful set scale up will halt with unhealthy stateful pod")
        break_http_probe(c, d.kubectl, ss)
        wait_for_running_and_not_ready(c, replicas_of(ss), ss)
        wait_for_status_ready_replicas(apps, ss, 0)
        update_replicas(apps, ss, 3)
        confirm_stateful_pod_count(c, 1, ss, 10, True)

        by("Scaling up stateful set " + SS_NAME + " to 3 replicas and waiting until all of them "
           "will be running in namespace " + ns)
        restore_http_probe(c, d.kubectl, ss)
        wait_for_running_and_ready(c, 3, ss)

        by("Verifying that stateful set " + SS_NAME + " was scaled up in order")
        order_err = wg.wait()
        expect_no_err(order_err)

        by("Scale down will halt with unhealthy stateful pod")
        pl = expect_no_error(c.list_namespaced_pod, ns, label_selector=selector)

        # Verify that stateful set will be scaled down in order.
        wg = GoRoutine(lambda: _pod_order_watch(c, ns, selector, pl, "DELETED",
                                                [SS_NAME + "-2", SS_NAME + "-1",
                                                 SS_NAME + "-0"]))

        break_http_probe(c, d.kubectl, ss)
        wait_for_status_ready_replicas(apps, ss, 0)
        wait_for_running_and_not_ready(c, 3, ss)
        update_replicas(apps, ss, 0)
        confirm_stateful_pod_count(c, 3, ss, 10, True)

        by("Scaling down stateful set " + SS_NAME + " to 0 replicas and waiting until none of "
           "pods will run in namespace" + ns)
        restore_http_probe(c, d.kubectl, ss)
        scale(apps, c, ss, 0)  # (upstream does not check the error)

        by("Verifying that stateful set " + SS_NAME + " was scaled down in reverse order")
        order_err = wg.wait()
        expect_no_err(order_err)

    d.run(body)


#   Release: v1.9
#   Testname: StatefulSet, Burst Scaling
#   Description: StatefulSet MUST support the Parallel PodManagementPolicy for burst scaling.
#   This test does not depend on a preexisting default StorageClass or a dynamic provisioner.
@conformance("[sig-apps] StatefulSet Basic StatefulSet functionality [StatefulSetBasic] Burst "
             "scaling should run to completion even with unhealthy pods [Slow] [Conformance]")
@pytest.mark.test_timeout(900)  # upstream's waits poll every 10 s
def test_burst_scaling(new_framework, kubectl):
    """ConformanceIt("Burst scaling should run to completion even with unhealthy pods
    [Slow]")"""
    d = _Describe(new_framework, kubectl)
    c, apps, ns = d.c, d.apps, d.ns

    def body():
        ps_labels = dict(LABELS)

        by("Creating stateful set " + SS_NAME + " in namespace " + ns)
        ss = new_stateful_set(SS_NAME, ns, HEADLESS_SVC_NAME, 1, None, None, ps_labels)
        ss.spec.pod_management_policy = "Parallel"
        set_http_probe(ss)
        ss = expect_no_error(apps.create_namespaced_stateful_set, ns, ss)

        by("Waiting until all stateful set " + SS_NAME + " replicas will be running in "
           "namespace " + ns)
        wait_for_running_and_ready(c, replicas_of(ss), ss)

        by("Confirming that stateful set scale up will not halt with unhealthy stateful pod")
        break_http_probe(c, d.kubectl, ss)
        wait_for_running_and_not_ready(c, replicas_of(ss), ss)
        wait_for_status_ready_replicas(apps, ss, 0)
        update_replicas(apps, ss, 3)
        confirm_stateful_pod_count(c, 3, ss, 10, False)

        by("Scaling up stateful set " + SS_NAME + " to 3 replicas and waiting until all of them "
           "will be running in namespace " + ns)
        restore_http_probe(c, d.kubectl, ss)
        wait_for_running_and_ready(c, 3, ss)

        by("Scale down will not halt with unhealthy stateful pod")
        break_http_probe(c, d.kubectl, ss)
        wait_for_status_ready_replicas(apps, ss, 0)
        wait_for_running_and_not_ready(c, 3, ss)
        update_replicas(apps, ss, 0)
        confirm_stateful_pod_count(c, 0, ss, 10, False)

        by("Scaling down stateful set " + SS_NAME + " to 0 replicas and waiting until none of "
           "pods will run in namespace" + ns)
        restore_http_probe(c, d.kubectl, ss)
        scale(apps, c, ss, 0)  # (upstream does not check the error)
        wait_for_status_replicas(apps, ss, 0)

    d.run(body)


#   Release: v1.9
#   Testname: StatefulSet, Recreate Failed Pod
#   Description: StatefulSet MUST delete and recreate Pods it owns that go into a Failed
#   state, such as when they are rejected or evicted by a Node. This test does not depend on a
#   preexisting default StorageClass or a dynamic provisioner.
@conformance("[sig-apps] StatefulSet Basic StatefulSet functionality [StatefulSetBasic] Should "
             "recreate evicted statefulset [Conformance]")
@pytest.mark.test_timeout(900)  # upstream allows 5 minutes for the recreation
def test_recreate_evicted_statefulset(new_framework, kubectl):
    """ConformanceIt("Should recreate evicted statefulset"): the set's pod shares a host port
    with a plain pod on the same node, so the kubelet must reject it (phase Failed) and the
    controller delete and recreate it until the plain pod is gone."""
    d = _Describe(new_framework, kubectl)
    f, c, apps, ns = d.f, d.c, d.apps, d.ns

    def body():
        pod_name = "test-pod"
        stateful_pod_name = SS_NAME + "-0"
        by("Looking for a node to schedule stateful set and pod")
        node, err = get_random_ready_schedulable_node(c)
        expect_no_err(err)

        by("Creating pod with conflicting port in namespace " + ns)
        conflicting_port = client.V1ContainerPort(host_port=21017, container_port=21017,
                                                  name="conflict")
        pod = client.V1Pod(
            metadata=client.V1ObjectMeta(name=pod_name),
            spec=client.V1PodSpec(
                containers=[webserver_container("webserver", WEBSERVER_IMAGE,
                                                ports=[conflicting_port])],
                node_name=node.metadata.name))
        pod = expect_no_error(c.create_namespaced_pod, ns, pod)
        by("Waiting until pod " + pod_name + " will start running in namespace " + ns)
        err = wait_for_pod_name_running(c, pod_name, ns)
        if err is not None:
            fail("Pod %s did not start running: %s", pod_name, err)

        by("Creating statefulset with conflicting port in namespace " + ns)
        ss = new_stateful_set(SS_NAME, ns, HEADLESS_SVC_NAME, 1, None, None, LABELS)
        stateful_pod_container = ss.spec.template.spec.containers[0]
        stateful_pod_container.ports = (stateful_pod_container.ports or []) + [conflicting_port]
        ss.spec.template.spec.node_name = node.metadata.name
        expect_no_error(apps.create_namespaced_stateful_set, ns, ss)

        initial = {"uid": ""}
        by("Waiting until stateful pod " + stateful_pod_name + " will be recreated and deleted "
           "at least once in namespace " + ns)

        field_selector = "metadata.name=" + stateful_pod_name
        pl = expect_no_error(c.list_namespaced_pod, ns, field_selector=field_selector)
        if pl.items:
            p = pl.items[0]
            logf("Observed stateful pod in namespace: %s, name: %s, uid: %s, status phase: %s. "
                 "Waiting for statefulset controller to delete.", p.metadata.namespace,
                 p.metadata.name, p.metadata.uid, pod_phase(p))
            initial["uid"] = p.metadata.uid

        # ctx, cancel := watchtools.ContextWithOptionalTimeout(ctx, statefulPodTimeout): the
        # rest of the test (the watch, the delete and the Eventually) runs under this one
        # 5-minute context.
        ctx_deadline = time.monotonic() + STATEFUL_POD_TIMEOUT

        # we need to get UID from pod in any state and wait until stateful set controller
        # will remove pod at least once
        def condition(event):
            p = event["object"]
            if event["type"] == "DELETED":
                logf("Observed delete event for stateful pod %s in namespace %s",
                     p.metadata.name, p.metadata.namespace)
                if initial["uid"] == "":
                    return False, None
                return True, None
            logf("Observed stateful pod in namespace: %s, name: %s, uid: %s, status phase: %s. "
                 "Waiting for statefulset controller to delete.", p.metadata.namespace,
                 p.metadata.name, p.metadata.uid, pod_phase(p))
            initial["uid"] = p.metadata.uid
            return False, None

        _, err = watch_until(ctx_deadline - time.monotonic(), pl.metadata.resource_version,
                             c.list_namespaced_pod, ns, field_selector=field_selector,
                             conditions=[condition])
        if err is not None:
            fail("Pod %s expected to be re-created at least once", stateful_pod_name)

        by("Removing pod with conflicting port in namespace " + ns)
        expect_no_error(c.delete_namespaced_pod, pod.metadata.name, ns,
                        body=client.V1DeleteOptions(grace_period_seconds=0))

        by("Waiting when stateful pod " + stateful_pod_name + " will be recreated in namespace "
           + ns + " and will be in running state")
        # we may catch delete event, that's why we are waiting for running phase like this,
        # and not with watchtools.UntilWithoutRetry
        # gomega.Eventually(ctx, f, statefulPodTimeout, 2*time.Second).Should(gomega.BeNil())
        start = time.monotonic()
        deadline = min(start + STATEFUL_POD_TIMEOUT, ctx_deadline)
        while True:
            try:
                stateful_pod = c.read_namespaced_pod(stateful_pod_name, ns)
            except ApiException as e:
                last = describe_error(e)
            else:
                if pod_phase(stateful_pod) != "Running":
                    last = "pod %s is not in running phase: %s" % (stateful_pod.metadata.name,
                                                                   pod_phase(stateful_pod))
                elif stateful_pod.metadata.uid == initial["uid"]:
                    last = "pod %s wasn't recreated: %s == %s" % (
                        stateful_pod.metadata.name, stateful_pod.metadata.uid, initial["uid"])
                else:
                    break
            if time.monotonic() + 2 > deadline:
                fail("Timed out after %.3fs.\nExpected\n    <*errors.errorString>: %s\nto be nil",
                     time.monotonic() - start, last)
            time.sleep(2)

    d.run(body)


#   Release: v1.16, v1.21
#   Testname: StatefulSet resource Replica scaling
#   Description: Create a StatefulSet resource. Newly created StatefulSet resource MUST have a
#   scale of one. Bring the scale of the StatefulSet resource up to two. StatefulSet scale MUST
#   be at two replicas.
@conformance("[sig-apps] StatefulSet Basic StatefulSet functionality [StatefulSetBasic] should "
             "have a working scale subresource [Conformance]")
def test_scale_subresource(new_framework, kubectl):
    """ConformanceIt("should have a working scale subresource")"""
    d = _Describe(new_framework, kubectl)
    c, apps, ns = d.c, d.apps, d.ns

    def body():
        by("Creating statefulset " + SS_NAME + " in namespace " + ns)
        ss = new_stateful_set(SS_NAME, ns, HEADLESS_SVC_NAME, 1, None, None, LABELS)
        set_http_probe(ss)
        ss = expect_no_error(apps.create_namespaced_stateful_set, ns, ss)
        wait_for_running_and_ready(c, replicas_of(ss), ss)
        wait_for_status(apps, c, ss)

        by("getting scale subresource")
        try:
            scale_obj = apps.read_namespaced_stateful_set_scale(SS_NAME, ns)
        except ApiException as err:
            fail("Failed to get scale subresource: %s", describe_error(err))
        expect_equal(scale_obj.spec.replicas or 0, 1)
        expect_equal(status_field(scale_obj, "replicas"), 1)

        by("updating a scale subresource")
        scale_obj.metadata.resource_version = ""  # indicate the scale update should be unconditional
        scale_obj.spec.replicas = 2
        try:
            scale_result = apps.replace_namespaced_stateful_set_scale(SS_NAME, ns, scale_obj)
        except ApiException as err:
            fail("Failed to put scale subresource: %s", describe_error(err))
        expect_equal(scale_result.spec.replicas or 0, 2)

        by("verifying the statefulset Spec.Replicas was modified")
        try:
            ss = apps.read_namespaced_stateful_set(SS_NAME, ns)
        except ApiException as err:
            fail("Failed to get statefulset resource: %s", describe_error(err))
        expect_equal(replicas_of(ss), 2)

        by("Patch a scale subresource")
        scale_obj.metadata.resource_version = ""  # indicate the scale update should be unconditional
        scale_obj.spec.replicas = 4  # should be 2 after "UpdateScale" operation, now Patch to 4
        # json.Marshal(autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 4}})
        ss_scale_patch_payload = json.dumps(
            {"metadata": {"creationTimestamp": None}, "spec": {"replicas": scale_obj.spec.replicas},
             "status": {"replicas": 0}}, separators=(",", ":"))
        expect_no_error(raw_call, d.f.api_client, "PATCH",
                        "/apis/apps/v1/namespaces/%s/statefulsets/%s/scale" % (ns, SS_NAME),
                        body=json.loads(ss_scale_patch_payload),
                        headers={"Content-Type": "application/strategic-merge-patch+json"},
                        explain="Failed to patch stateful set")

        by("verifying the statefulset Spec.Replicas was modified")
        ss = expect_no_error(apps.read_namespaced_stateful_set, SS_NAME, ns,
                             explain="Failed to get statefulset resource")
        expect_equal(replicas_of(ss), 4, "statefulset should have 4 replicas")

    d.run(body)


#   Release: v1.22
#   Testname: StatefulSet, list, patch and delete a collection of StatefulSets
#   Description: When a StatefulSet is created it MUST succeed. It MUST succeed when listing
#   StatefulSets via a label selector. It MUST succeed when patching a StatefulSet. It MUST
#   succeed when deleting the StatefulSet via deleteCollection.
@conformance("[sig-apps] StatefulSet Basic StatefulSet functionality [StatefulSetBasic] should "
             "list, patch and delete a collection of StatefulSets [Conformance]")
def test_list_patch_delete_collection(new_framework, kubectl):
    """ConformanceIt("should list, patch and delete a collection of StatefulSets")"""
    d = _Describe(new_framework, kubectl)
    c, apps, ns = d.c, d.apps, d.ns

    def body():
        ss_patch_replicas = 2
        ss_patch_image = PAUSE
        one = 1
        ss_name = "test-ss"

        # Define StatefulSet Labels
        ss_pod_labels = {"name": "sample-pod", "pod": WEBSERVER_IMAGE_NAME}
        ss = new_stateful_set(ss_name, ns, HEADLESS_SVC_NAME, 1, None, None, ss_pod_labels)
        set_http_probe(ss)
        ss = expect_no_error(apps.create_namespaced_stateful_set, ns, ss)
        wait_for_running_and_ready(c, replicas_of(ss), ss)
        wait_for_status(apps, c, ss)

        by("patching the StatefulSet")
        ss_patch = {
            "metadata": {"labels": {"test-ss": "patched"}},
            "spec": {
                "replicas": ss_patch_replicas,
                "template": {"spec": {
                    "TerminationGracePeriodSeconds": one,
                    "containers": [{"image": ss_patch_image, "name": ss_name}],
                }},
            },
        }
        expect_no_error(raw_call, d.f.api_client, "PATCH",
                        "/apis/apps/v1/namespaces/%s/statefulsets/%s" % (ns, ss_name),
                        body=ss_patch,
                        headers={"Content-Type": "application/strategic-merge-patch+json"},
                        explain="failed to patch Set")
        ss = expect_no_error(apps.read_namespaced_stateful_set, ss_name, ns,
                             explain="Failed to get statefulset resource")
        expect_equal(replicas_of(ss), ss_patch_replicas, "statefulset should have 2 replicas")
        expect_equal(ss.spec.template.spec.containers[0].image, ss_patch_image,
                     "statefulset not using ssPatchImage. Is using %s"
                     % ss.spec.template.spec.containers[0].image)
        wait_for_running_and_ready(c, replicas_of(ss), ss)
        wait_for_status(apps, c, ss)

        by("Listing all StatefulSets")
        ss_list = expect_no_error(apps.list_stateful_set_for_all_namespaces,
                                  label_selector="test-ss=patched",
                                  explain="failed to list StatefulSets")
        expect_equal(len(ss_list.items), 1, "filtered list wasn't found")

        by("Delete all of the StatefulSets")
        expect_no_error(apps.delete_collection_namespaced_stateful_set, ns,
                        label_selector="test-ss=patched",
                        body=client.V1DeleteOptions(grace_period_seconds=one),
                        explain="failed to delete StatefulSets")

        by("Verify that StatefulSets have been deleted")
        ss_list = expect_no_error(apps.list_stateful_set_for_all_namespaces,
                                  label_selector="test-ss=patched",
                                  explain="failed to list StatefulSets")
        expect_equal(len(ss_list.items), 0, "filtered list should have no Statefulsets")

    d.run(body)


def _conditions(ss):
    return (ss.status.conditions if ss.status is not None else None) or []


#   Release: v1.22
#   Testname: StatefulSet, status sub-resource
#   Description: When a StatefulSet is created it MUST succeed. Attempt to read, update and
#   patch its status sub-resource; all mutating sub-resource operations MUST be visible to
#   subsequent reads.
@conformance("[sig-apps] StatefulSet Basic StatefulSet functionality [StatefulSetBasic] should "
             "validate Statefulset Status endpoints [Conformance]")
def test_status_endpoints(new_framework, kubectl):
    """ConformanceIt("should validate Statefulset Status endpoints")"""
    d = _Describe(new_framework, kubectl)
    c, apps, ns = d.c, d.apps, d.ns

    def body():
        label_selector = "e2e=testing"
        ss_list = expect_no_error(apps.list_stateful_set_for_all_namespaces,
                                  label_selector=label_selector,
                                  explain="failed to list StatefulSets")

        by("Creating statefulset " + SS_NAME + " in namespace " + ns)
        ss = new_stateful_set(SS_NAME, ns, HEADLESS_SVC_NAME, 1, None, None, LABELS)
        set_http_probe(ss)
        ss = expect_no_error(apps.create_namespaced_stateful_set, ns, ss)
        wait_for_running_and_ready(c, replicas_of(ss), ss)
        wait_for_status(apps, c, ss)

        by("Patch Statefulset to include a label")
        payload = '{"metadata":{"labels":{"e2e":"testing"}}}'
        ss = expect_no_error(raw_call, d.f.api_client, "PATCH",
                             "/apis/apps/v1/namespaces/%s/statefulsets/%s" % (ns, SS_NAME),
                             body=json.loads(payload),
                             headers={"Content-Type": "application/strategic-merge-patch+json"},
                             response_type="V1StatefulSet")

        by("Getting /status")
        # f.DynamicClient.Resource(statefulsets).Namespace(ns).Get(ctx, ssName, {}, "status")
        ss_status_unstructured = expect_no_error(
            raw_call, d.f.api_client, "GET",
            "/apis/apps/v1/namespaces/%s/statefulsets/%s/status" % (ns, SS_NAME),
            explain="Failed to fetch the status of replica set %s in namespace %s" % (SS_NAME,
                                                                                      ns))
        ss_status = to_model(ss_status_unstructured, "V1StatefulSet")
        logf("StatefulSet %s has Conditions: %s", SS_NAME, _conditions(ss_status))

        by("updating the StatefulSet Status")
        updated = []

        def update():
            status_to_update = expect_no_error(apps.read_namespaced_stateful_set, SS_NAME, ns,
                                               explain="Unable to retrieve statefulset %s"
                                               % SS_NAME)
            if status_to_update.status is None:
                status_to_update.status = client.V1StatefulSetStatus(replicas=0)
            status_to_update.status.conditions = _conditions(status_to_update) + [
                client.V1StatefulSetCondition(type="StatusUpdate", status="True", reason="E2E",
                                              message="Set from e2e test")]
            updated.append(apps.replace_namespaced_stateful_set_status(SS_NAME, ns,
                                                                       status_to_update))
            return updated[-1]

        expect_no_error(retry_on_conflict, update, explain="Failed to update status.")
        logf("updatedStatus.Conditions: %s", _conditions(updated[-1]))

        def matches(e):
            return (e.metadata.name == ss.metadata.name and
                    e.metadata.namespace == ss.metadata.namespace and
                    (e.metadata.labels or {}).get("e2e", "") ==
                    (ss.metadata.labels or {}).get("e2e", ""))

        def observed_other(event):
            obj = event.get("object")
            kind = type(obj).__name__ if obj is not None else "<nil>"
            logf("Observed %s event: %s", kind, event["type"])

        def status_updated(event):
            e = event.get("object")
            if isinstance(e, client.V1StatefulSet):
                found = matches(e)
                if not found:
                    logf("Observed Statefulset %s in namespace %s with annotations: %s & "
                         "Conditions: %s", ss.metadata.name, ss.metadata.namespace,
                         ss.metadata.annotations, _conditions(ss))
                    return False, None
                for cond in _conditions(e):
                    if (cond.type == "StatusUpdate" and cond.reason == "E2E" and
                            cond.message == "Set from e2e test"):
                        logf("Found Statefulset %s in namespace %s with labels: %s annotations: "
                             "%s & Conditions: %s", ss.metadata.name, ss.metadata.namespace,
                             ss.metadata.labels, ss.metadata.annotations, cond)
                        return found, None
                    logf("Observed Statefulset %s in namespace %s with annotations: %s & "
                         "Conditions: %s", ss.metadata.name, ss.metadata.namespace,
                         ss.metadata.annotations, cond)
            observed_other(event)
            return False, None

        by("watching for the statefulset status to be updated")
        _, err = watch_until(STATEFUL_SET_TIMEOUT, ss_list.metadata.resource_version,
                             apps.list_namespaced_stateful_set, ns,
                             label_selector=label_selector, conditions=[status_updated])
        if err is not None:
            fail("failed to locate Statefulset %s in namespace %s: %s", ss.metadata.name, ns,
                 err)
        logf("Statefulset %s has an updated status", SS_NAME)

        by("patching the Statefulset Status")
        payload = '{"status":{"conditions":[{"type":"StatusPatched","status":"True"}]}}'
        logf("Patch payload: %s", payload)
        patched_stateful_set = expect_no_error(
            raw_call, d.f.api_client, "PATCH",
            "/apis/apps/v1/namespaces/%s/statefulsets/%s/status" % (ns, SS_NAME),
            body=json.loads(payload), headers={"Content-Type": "application/merge-patch+json"},
            response_type="V1StatefulSet", explain="Failed to patch status.")
        logf("Patched status conditions: %s", _conditions(patched_stateful_set))

        by("watching for the Statefulset status to be patched")

        def status_patched(event):
            # upstream's condition starts with `defer cancel()`: the context ends after the
            # first event, and the result of this Until is not checked.
            e = event.get("object")
            if isinstance(e, client.V1StatefulSet):
                found = matches(e)
                if not found:
                    logf("Observed Statefulset %s in namespace %s with annotations: %s & "
                         "Conditions: %s", ss.metadata.name, ss.metadata.namespace,
                         ss.metadata.annotations, _conditions(ss))
                    return True, None
                for cond in _conditions(e):
                    if cond.type == "StatusPatched":
                        logf("Found Statefulset %s in namespace %s with labels: %s annotations: "
                             "%s & Conditions: %s", ss.metadata.name, ss.metadata.namespace,
                             ss.metadata.labels, ss.metadata.annotations, cond)
                        return True, None
                    logf("Observed Statefulset %s in namespace %s with annotations: %s & "
                         "Conditions: %s", ss.metadata.name, ss.metadata.namespace,
                         ss.metadata.annotations, cond)
            observed_other(event)
            return True, None

        watch_until(STATEFUL_SET_TIMEOUT, ss_list.metadata.resource_version,
                    apps.list_namespaced_stateful_set, ns, label_selector=label_selector,
                    conditions=[status_patched])

    d.run(body)
