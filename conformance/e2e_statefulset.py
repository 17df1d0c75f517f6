"""The parts of upstream's StatefulSet e2e helpers the ported StatefulSet tests use.

Upstream (kubernetes/kubernetes, v1.32):

* test/e2e/framework/statefulset (e2estatefulset): const.go (StatefulSetPoll 10 s,
  StatefulSetTimeout 10 min, StatefulPodTimeout 5 min), fixtures.go (NewStatefulSet,
  NewStatefulSetPVC, SortStatefulPods, getStatefulPodOrdinal), rest.go (GetPodList,
  DeleteAllStatefulSets, Scale, UpdateReplicas, ExecInStatefulPods, update), wait.go
  (WaitForRunning, WaitForState, WaitForRunningAndReady, WaitForPodReady,
  WaitForStatusReadyReplicas, WaitForStatusReplicas);
* test/e2e/apps/statefulset.go's helpers: httpProbe, rollbackTest, confirmStatefulPodCount,
  setHTTPProbe, breakHTTPProbe, breakPodHTTPProbe, restoreHTTPProbe, restorePodHTTPProbe,
  deleteStatefulPodAtIndex, getStatefulSetPodNameAtIndex, updateStatefulSetWithRetries,
  getStatefulSet; test/e2e/apps/wait.go (waitForPartitionedRollingUpdate, waitForStatus,
  waitForPodNotReady, waitForRollingUpdate, waitForRunningAndNotReady); test/e2e/apps/types.go
  (WebserverImageName, NewWebserverImage);
* test/e2e/framework/pod/output (e2eoutput): RunHostCmd, RunHostCmdWithRetries,
  DumpDebugInfo; test/e2e/framework/pod (e2epod.LogPodStates); test/e2e/framework/service
  (e2eservice.CreateServiceSpec).

Every upstream Failf / ExpectNoError is a pytest failure here (``fail``); helpers that return
an error upstream return None or the error text.

Image substitutions (the nodes never pull; kubelet-lite/images/build-images.sh):

* imageutils.Httpd (registry.k8s.io/e2e-test-images/httpd:2.4.38-4), the StatefulSet
  pods' `webserver` container and the "evicted" test's conflicting pod: Apache httpd in the
  foreground serving /usr/local/apache2/htdocs (which holds index.html) on port 80 and
  stopping at once on SIGTERM. It becomes the busybox image (docker.io/library/busybox:1.36)
  with a ``command`` that writes the same index.html into /usr/local/apache2/htdocs and runs
  busybox httpd in the foreground on port 80 with that directory as its document root,
  exiting on SIGTERM (``WEBSERVER_COMMAND``). So the tests' readiness probe
  (HTTP GET /index.html on port 80) and the way they break and restore it
  (``mv -v /usr/local/apache2/htdocs/index.html /tmp/`` and back, through kubectl exec
  /bin/sh) work exactly as with httpd: 200 while the file is there, 404 once it is moved.
* imageutils.HttpdNew (httpd:2.4.39-4, NewWebserverImage, the image the rolling-update tests
  switch to) becomes docker.io/library/busybox:latest: the same busybox image under another
  reference, so that the template (and so the revision) changes while the pods keep serving
  the same file the same way (the ``command`` stays in the template, as the tests change only
  ``image``).
* imageutils.Pause is the same reference as upstream's (registry.k8s.io/pause:3.10).

One deviation, in DeleteAllStatefulSets (the Describe's AfterEach): upstream polls the
namespace's PersistentVolumeClaims (and then the PersistentVolumes bound to them) every 10 s
for up to 10 minutes, retrying when the List fails, and fails the test with "Timeout waiting
for pvc deletion." (and "Timeout waiting for pv provisioner to delete pvs, ...") if the List
never succeeds. When the server's discovery (GET /api/v1) does not list the resource at all,
no List can succeed during the poll, so the same error is recorded at once instead of after
10 minutes each (the outcome, a failed AfterEach, is the one upstream reaches); when the
resource is served the polls run exactly as upstream's.
"""

import re
import threading
import time

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_deployment import label_selector_as_selector_string
from e2e_framework import (BUSYBOX_IMAGE, CONTEXT_DEADLINE, PAUSE_IMAGE, by, describe_error,
                           fail, is_conflict, is_pod_ready, logf, poll, raw_call,
                           reason_for)
from e2e_rc import Kubectl, write_admin_kubeconfig  # noqa: F401  (re-exported for the tests)

# --------------------------------------------------------------------------- constants

STATEFUL_SET_POLL = 10           # statefulSetPoll / e2estatefulset.StatefulSetPoll
STATEFUL_SET_TIMEOUT = 10 * 60   # statefulSetTimeout / e2estatefulset.StatefulSetTimeout
STATEFUL_POD_TIMEOUT = 5 * 60    # statefulPodTimeout / e2estatefulset.StatefulPodTimeout

STATEFUL_SET_REVISION_LABEL = "controller-revision-hash"  # appsv1.StatefulSetRevisionLabel

# test/e2e/apps/types.go and the substitutions of the module doc.
WEBSERVER_IMAGE_NAME = "httpd"                          # WebserverImageName
WEBSERVER_IMAGE = BUSYBOX_IMAGE                         # imageutils.GetE2EImage(imageutils.Httpd)
NEW_WEBSERVER_IMAGE = "docker.io/library/busybox:latest"  # NewWebserverImage (HttpdNew)
PAUSE = PAUSE_IMAGE                                     # imageutils.GetE2EImage(imageutils.Pause)

# The httpd image's document root and page (httpd:2.4's htdocs/index.html).
HTDOCS = "/usr/local/apache2/htdocs"
INDEX_HTML = "<html><body><h1>It works!</h1></body></html>"
WEBSERVER_COMMAND = [
    "/bin/sh", "-c",
    "mkdir -p %s && echo '%s' >%s/index.html || exit 1\n"
    "trap 'exit 0' TERM\n"
    "httpd -f -p 80 -h %s &\n"
    "wait\n" % (HTDOCS, INDEX_HTML, HTDOCS, HTDOCS),
]


def webserver_container(name, image, ports=None, volume_mounts=None):
    """A container running imageutils.Httpd (see the module doc): `image` plus
    WEBSERVER_COMMAND."""
    return client.V1Container(name=name, image=image, command=list(WEBSERVER_COMMAND),
                              ports=ports, volume_mounts=volume_mounts)


# --------------------------------------------------------------------------- small Go bits


def status_field(obj, field, zero=0):
    """A status field as Go reads it (its zero value when unset)."""
    st = obj.status if obj is not None else None
    if st is None:
        return zero
    v = getattr(st, field)
    return zero if v is None else v


def generation(obj):
    return (obj.metadata.generation if obj.metadata is not None else None) or 0


def replicas_of(ss):
    """*ss.Spec.Replicas (a nil pointer would panic)."""
    if ss.spec is None or ss.spec.replicas is None:
        fail("runtime error: invalid memory address or nil pointer dereference "
             "(%s.Spec.Replicas)", ss.metadata.name)
    return ss.spec.replicas


def pod_label(pod, key):
    """pod.Labels[key] ("" when unset)."""
    return ((pod.metadata.labels if pod.metadata is not None else None) or {}).get(key, "")


def pod_phase(pod):
    return (pod.status.phase if pod.status is not None else None) or ""


def partition_of(ss):
    """*ss.Spec.UpdateStrategy.RollingUpdate.Partition (nil pointers would panic)."""
    us = ss.spec.update_strategy
    ru = us.rolling_update if us is not None else None
    if ru is None or ru.partition is None:
        fail("runtime error: invalid memory address or nil pointer dereference "
             "(%s.Spec.UpdateStrategy.RollingUpdate.Partition)", ss.metadata.name)
    return ru.partition


def go_duration(seconds):
    """time.Duration.String() for whole seconds ("10m0s", "5m0s", "10s")."""
    seconds = int(seconds)
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    if h:
        return "%dh%dm%ds" % (h, m, s)
    if m:
        return "%dm%ds" % (m, s)
    return "%ds" % s


def expect_no_err(err, explain=""):
    """framework.ExpectNoError(err, explain...) for the helpers' error texts."""
    if err is not None:
        if explain:
            fail("%s: %s", explain, err)
        fail("unexpected error: %s", err)


def expect_equal(actual, expected, explain=""):
    """gomega.Expect(actual).To(gomega.Equal(expected), explain) (framework.ExpectEqual)."""
    if actual != expected or type(actual) is not type(expected):
        fail("%sExpected\n    <%s>: %r\nto equal\n    <%s>: %r",
             (explain + "\n") if explain else "", type(actual).__name__, actual,
             type(expected).__name__, expected)


def expect_not_equal(actual, expected, explain=""):
    """gomega.Expect(actual).NotTo(gomega.Equal(expected), explain) (framework.ExpectNotEqual)."""
    if actual == expected and type(actual) is type(expected):
        fail("%sExpected\n    <%s>: %r\nnot to equal\n    <%s>: %r",
             (explain + "\n") if explain else "", type(actual).__name__, actual,
             type(expected).__name__, expected)


# --------------------------------------------------------------------------- e2eservice


def create_service_spec(service_name, external_name, is_headless, selector):
    """e2eservice.CreateServiceSpec"""
    svc = client.V1Service(metadata=client.V1ObjectMeta(name=service_name),
                           spec=client.V1ServiceSpec(selector=selector))
    if external_name:
        svc.spec.type = "ExternalName"
        svc.spec.external_name = external_name
    else:
        svc.spec.ports = [client.V1ServicePort(port=80, name="http", protocol="TCP")]
    if is_headless:
        svc.spec.cluster_ip = "None"
    return svc


# --------------------------------------------------------------------------- e2epod, e2eoutput


def log_pod_states(pods):
    """e2epod.LogPodStates"""
    max_pod_w, max_node_w, max_phase_w, max_grace_w = len("POD"), len("NODE"), len("PHASE"), \
        len("GRACE")
    for pod in pods:
        max_pod_w = max(max_pod_w, len(pod.metadata.name))
        max_node_w = max(max_node_w, len(pod.spec.node_name or ""))
        max_phase_w = max(max_phase_w, len(pod_phase(pod)))
    max_pod_w += 1
    max_node_w += 1
    max_phase_w += 1
    max_grace_w += 1
    logf("%-*s %-*s %-*s %-*s %s", max_pod_w, "POD", max_node_w, "NODE", max_phase_w, "PHASE",
         max_grace_w, "GRACE", "CONDITIONS")
    for pod in pods:
        grace = ""
        if pod.metadata.deletion_grace_period_seconds is not None:
            grace = "%ds" % pod.metadata.deletion_grace_period_seconds
        conds = [(c.type, c.status, c.reason) for c in
                 ((pod.status.conditions if pod.status is not None else None) or [])]
        logf("%-*s %-*s %-*s %-*s %s", max_pod_w, pod.metadata.name, max_node_w,
             pod.spec.node_name or "", max_phase_w, pod_phase(pod), max_grace_w, grace, conds)
    logf("")  # Final empty line helps for readability.


def run_host_cmd(kubectl, ns, name, cmd):
    """e2eoutput.RunHostCmd: `kubectl exec NAME -- /bin/sh -x -c CMD` (stdout, error)."""
    return kubectl.run_kubectl(ns, "exec", name, "--", "/bin/sh", "-x", "-c", cmd)


def run_host_cmd_with_retries(kubectl, ns, name, cmd, interval, timeout):
    """e2eoutput.RunHostCmdWithRetries: RunHostCmd until it succeeds or `timeout` has
    passed, every `interval`."""
    start = time.monotonic()
    while True:
        out, err = run_host_cmd(kubectl, ns, name, cmd)
        if err is None:
            return out, None
        elapsed = time.monotonic() - start
        if elapsed > timeout:
            return out, "RunHostCmd still failed after %.3fs: %s" % (elapsed, err)
        logf("Waiting %s to retry failed RunHostCmd: %s", go_duration(interval), err)
        time.sleep(interval)


def dump_debug_info(core, kubectl, ns):
    """e2eoutput.DumpDebugInfo: `kubectl describe po` and the last 100 log lines of every
    pod in ns (errors ignored)."""
    try:
        pods = core.list_namespaced_pod(ns).items
    except ApiException:
        pods = []
    for s in pods:
        desc, _ = kubectl.run_kubectl(ns, "describe", "po", s.metadata.name)
        logf("\nOutput of kubectl describe %s:\n%s", s.metadata.name, desc)
        out, _ = kubectl.run_kubectl(ns, "logs", s.metadata.name, "--tail=100")
        logf("\nLast 100 log lines of %s:\n%s", s.metadata.name, out)


# --------------------------------------------------------------------------- fixtures.go


def new_stateful_set_pvc(name):
    """e2estatefulset.NewStatefulSetPVC"""
    return client.V1PersistentVolumeClaim(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PersistentVolumeClaimSpec(
            access_modes=["ReadWriteOnce"],
            resources=client.V1ResourceRequirements(requests={"storage": "1"})))


def new_stateful_set(name, ns, governing_svc_name, replicas, stateful_pod_mounts, pod_mounts,
                     labels):
    """e2estatefulset.NewStatefulSet: one container "webserver" (imageutils.Httpd, see the
    module doc), claims for stateful_pod_mounts, hostPath volumes for pod_mounts,
    updateStrategy {type: RollingUpdate} (no rollingUpdate)."""
    stateful_pod_mounts = list(stateful_pod_mounts or [])
    pod_mounts = list(pod_mounts or [])
    mounts = stateful_pod_mounts + pod_mounts
    claims = [new_stateful_set_pvc(m.name) for m in stateful_pod_mounts]
    vols = [client.V1Volume(name=m.name,
                            host_path=client.V1HostPathVolumeSource(path="/tmp/%s" % m.name))
            for m in pod_mounts]
    return client.V1StatefulSet(
        api_version="apps/v1", kind="StatefulSet",
        metadata=client.V1ObjectMeta(name=name, namespace=ns),
        spec=client.V1StatefulSetSpec(
            selector=client.V1LabelSelector(match_labels=dict(labels)),
            replicas=replicas,
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=dict(labels), annotations={}),
                spec=client.V1PodSpec(
                    containers=[webserver_container("webserver", WEBSERVER_IMAGE,
                                                    volume_mounts=mounts or None)],
                    volumes=vols or None)),
            update_strategy=client.V1StatefulSetUpdateStrategy(type="RollingUpdate"),
            volume_claim_templates=claims or None,
            service_name=governing_svc_name))


_STATEFUL_POD_REGEX = re.compile(r"(.*)-([0-9]+)$")


def get_stateful_pod_ordinal(pod):
    """getStatefulPodOrdinal: -1 when the name has no ordinal."""
    m = _STATEFUL_POD_REGEX.match(pod.metadata.name)
    if m is None:
        return -1
    v = int(m.group(2))
    return v if v < 2 ** 31 else -1


def sort_stateful_pods(pods):
    """e2estatefulset.SortStatefulPods: by ordinal (sort.Sort; the names are distinct)."""
    pods.items = sorted(pods.items, key=get_stateful_pod_ordinal)


# --------------------------------------------------------------------------- rest.go


def get_pod_list(core, ss):
    """e2estatefulset.GetPodList: the pods matching the set's selector (in the server's
    list order)."""
    selector = label_selector_as_selector_string(ss.spec.selector)
    try:
        return core.list_namespaced_pod(ss.metadata.namespace, label_selector=selector)
    except ApiException as err:
        fail("unexpected error: %s", describe_error(err))


def update(apps, ns, name, replicas):
    """update (rest.go): GET, set spec.replicas, PUT; up to 3 tries on conflicts and server
    timeouts."""
    for _ in range(3):
        try:
            ss = apps.read_namespaced_stateful_set(name, ns)
        except ApiException as err:
            fail("failed to get statefulset %r: %s", name, describe_error(err))
        ss.spec.replicas = replicas
        try:
            return apps.replace_namespaced_stateful_set(name, ns, ss)
        except ApiException as err:
            if not is_conflict(err) and reason_for(err) != "ServerTimeout":
                fail("failed to update statefulset %r: %s", name, describe_error(err))
    fail("too many retries draining statefulset %r", name)


def scale(apps, core, ss, count):
    """e2estatefulset.Scale: (ss, error text or None)."""
    name = ss.metadata.name
    ns = ss.metadata.namespace
    logf("Scaling statefulset %s to %d", name, count)
    ss = update(apps, ns, name, count)
    holder = {}

    def condition():
        holder["list"] = get_pod_list(core, ss)
        return len(holder["list"].items) == count, None

    poll_err = poll(STATEFUL_SET_POLL, STATEFUL_SET_TIMEOUT, condition,
                    timeout_error=CONTEXT_DEADLINE)
    if poll_err is not None:
        unhealthy = []
        for p in holder["list"].items:
            del_ts, phase, readiness = p.metadata.deletion_timestamp, pod_phase(p), \
                is_pod_ready(p)
            if del_ts is not None or phase != "Running" or not readiness:
                unhealthy.append("%s: deletion %s, phase %s, readiness %s" % (
                    p.metadata.name, del_ts, phase, readiness))
        return ss, "Failed to scale statefulset to %d in %s. Remaining pods:\n%s" % (
            count, go_duration(STATEFUL_SET_TIMEOUT), unhealthy)
    return ss, None


def update_replicas(apps, ss, count):
    """e2estatefulset.UpdateReplicas"""
    update(apps, ss.metadata.namespace, ss.metadata.name, count)


def exec_in_stateful_pods(core, kubectl, ss, cmd):
    """e2estatefulset.ExecInStatefulPods: cmd in every pod, stopping at the first error
    (returned)."""
    pod_list = get_pod_list(core, ss)
    for p in pod_list.items:
        stdout, err = run_host_cmd_with_retries(kubectl, p.metadata.namespace, p.metadata.name,
                                                cmd, STATEFUL_SET_POLL, STATEFUL_POD_TIMEOUT)
        logf("stdout of %s on %s: %s", cmd, p.metadata.name, stdout)
        if err is not None:
            return err
    return None


def _served(api_client, path, resource):
    """Whether the discovery document at `path` lists `resource`."""
    try:
        doc = raw_call(api_client, "GET", path)
    except ApiException:
        return False
    return any(r.get("name") == resource for r in (doc or {}).get("resources", []))


def delete_all_stateful_sets(apps, core, api_client, ns):
    """e2estatefulset.DeleteAllStatefulSets: scale every set to 0, wait for status.replicas
    0, delete it (orphanDependents false), then delete the namespace's PVCs and wait for
    their PVs to go (see the module doc for the unserved-resource case)."""
    try:
        ss_list = apps.list_namespaced_stateful_set(ns)
    except ApiException as err:
        fail("unexpected error: %s", describe_error(err))
    err_list = []
    for ss in ss_list.items:
        ss, err = scale(apps, core, ss, 0)
        if err is not None:
            err_list.append(err)
        wait_for_status_replicas(apps, ss, 0)
        logf("Deleting statefulset %s", ss.metadata.name)
        # Use OrphanDependents=false so it's deleted synchronously.
        # We already made sure the Pods are gone inside Scale().
        try:
            apps.delete_namespaced_stateful_set(
                ss.metadata.name, ss.metadata.namespace,
                body=client.V1DeleteOptions(orphan_dependents=False))
        except ApiException as err:
            err_list.append(describe_error(err))

    # pvs are global, so we need to wait for the exact ones bound to the statefulset pvcs.
    pv_names = set()
    if not _served(api_client, "/api/v1", "persistentvolumeclaims"):
        logf("WARNING: Failed to list pvcs, retrying: the server does not serve "
             "persistentvolumeclaims (GET /api/v1 does not list it), so upstream's poll "
             "(every %s for %s) cannot succeed", go_duration(STATEFUL_SET_POLL),
             go_duration(STATEFUL_SET_TIMEOUT))
        pvc_poll_err = CONTEXT_DEADLINE
    else:
        def pvc_condition():
            try:
                pvc_list = core.list_namespaced_persistent_volume_claim(ns)
            except ApiException as err:
                logf("WARNING: Failed to list pvcs, retrying %s", describe_error(err))
                return False, None
            for pvc in pvc_list.items:
                pv_names.add(pvc.spec.volume_name or "")
                logf("Deleting pvc: %s with volume %s", pvc.metadata.name, pvc.spec.volume_name)
                try:
                    core.delete_namespaced_persistent_volume_claim(pvc.metadata.name, ns)
                except ApiException:
                    return False, None
            return True, None

        pvc_poll_err = poll(STATEFUL_SET_POLL, STATEFUL_SET_TIMEOUT, pvc_condition,
                            timeout_error=CONTEXT_DEADLINE)
    if pvc_poll_err is not None:
        err_list.append("Timeout waiting for pvc deletion.")

    if not _served(api_client, "/api/v1", "persistentvolumes"):
        logf("WARNING: Failed to list pvs, retrying: the server does not serve "
             "persistentvolumes (GET /api/v1 does not list it), so upstream's poll (every %s "
             "for %s) cannot succeed", go_duration(STATEFUL_SET_POLL),
             go_duration(STATEFUL_SET_TIMEOUT))
        pv_poll_err = CONTEXT_DEADLINE
    else:
        def pv_condition():
            try:
                pv_list = core.list_persistent_volume()
            except ApiException as err:
                logf("WARNING: Failed to list pvs, retrying %s", describe_error(err))
                return False, None
            waiting_for = ["%s: %s" % (pv.metadata.name, pv.status) for pv in pv_list.items
                           if pv.metadata.name in pv_names]
            if not waiting_for:
                return True, None
            logf("Still waiting for pvs of statefulset to disappear:\n%s",
                 "\n".join(waiting_for))
            return False, None

        pv_poll_err = poll(STATEFUL_SET_POLL, STATEFUL_SET_TIMEOUT, pv_condition,
                           timeout_error=CONTEXT_DEADLINE)
    if pv_poll_err is not None:
        err_list.append("Timeout waiting for pv provisioner to delete pvs, this might mean the "
                        "test leaked pvs.")
    if err_list:
        fail("unexpected error: %s", "\n".join(err_list))


# --------------------------------------------------------------------------- wait.go


def wait_for_running(core, num_pods_running, num_pods_ready, ss):
    """e2estatefulset.WaitForRunning: exactly num_pods_running pods, all Running, the first
    num_pods_ready ordinals Ready and the others not; more pods fail at once."""

    def condition():
        pod_list = get_pod_list(core, ss)
        sort_stateful_pods(pod_list)
        if len(pod_list.items) < num_pods_running:
            logf("Found %d stateful pods, waiting for %d", len(pod_list.items), num_pods_running)
            return False, None
        if len(pod_list.items) > num_pods_running:
            return False, "too many pods scheduled, expected %d got %d" % (
                num_pods_running, len(pod_list.items))
        for p in pod_list.items:
            should_be_ready = get_stateful_pod_ordinal(p) < num_pods_ready
            ready = is_pod_ready(p)
            desired_readiness = should_be_ready == ready
            logf("Waiting for pod %s to enter %s - Ready=%s, currently %s - Ready=%s",
                 p.metadata.name, "Running", should_be_ready, pod_phase(p), ready)
            if pod_phase(p) != "Running" or not desired_readiness:
                return False, None
        return True, None

    poll_err = poll(STATEFUL_SET_POLL, STATEFUL_SET_TIMEOUT, condition,
                    timeout_error=CONTEXT_DEADLINE)
    if poll_err is not None:
        fail("Failed waiting for pods to enter running: %s", poll_err)


def wait_for_state(apps, core, ss, until):
    """e2estatefulset.WaitForState: GET the set and list its pods every StatefulSetPoll
    until `until(set, pods)` returns (True, None) or an error."""

    def condition():
        try:
            ss_get = apps.read_namespaced_stateful_set(ss.metadata.name, ss.metadata.namespace)
        except ApiException as err:
            return False, describe_error(err)
        pod_list = get_pod_list(core, ss_get)
        return until(ss_get, pod_list)

    poll_err = poll(STATEFUL_SET_POLL, STATEFUL_SET_TIMEOUT, condition,
                    timeout_error=CONTEXT_DEADLINE)
    if poll_err is not None:
        fail("Failed waiting for state update: %s", poll_err)


def wait_for_running_and_ready(core, num_stateful_pods, ss):
    """e2estatefulset.WaitForRunningAndReady"""
    wait_for_running(core, num_stateful_pods, num_stateful_pods, ss)


def wait_for_pod_ready(apps, core, ss, pod_name):
    """e2estatefulset.WaitForPodReady: (set, pods)."""
    out = {"set": ss, "pods": None}

    def until(set2, pods2):
        out["set"], out["pods"] = set2, pods2
        for p in pods2.items:
            if p.metadata.name == pod_name:
                return is_pod_ready(p), None
        return False, None

    wait_for_state(apps, core, ss, until)
    return out["set"], out["pods"]


def _wait_for_status_field(apps, ss, expected, field, label):
    logf("Waiting for statefulset status.%s updated to %d", label, expected)
    ns, name = ss.metadata.namespace, ss.metadata.name

    def condition():
        try:
            ss_get = apps.read_namespaced_stateful_set(name, ns)
        except ApiException as err:
            return False, describe_error(err)
        if status_field(ss_get, "observed_generation") < generation(ss):
            return False, None
        if status_field(ss_get, field) != expected:
            logf("Waiting for statefulset status.%s to become %d, currently %d", label,
                 expected, status_field(ss_get, field))
            return False, None
        return True, None

    poll_err = poll(STATEFUL_SET_POLL, STATEFUL_SET_TIMEOUT, condition,
                    timeout_error=CONTEXT_DEADLINE)
    if poll_err is not None:
        fail("Failed waiting for statefulset status.%s updated to %d: %s", label, expected,
             poll_err)


def wait_for_status_ready_replicas(apps, ss, expected_replicas):
    """e2estatefulset.WaitForStatusReadyReplicas"""
    _wait_for_status_field(apps, ss, expected_replicas, "ready_replicas", "readyReplicas")


def wait_for_status_replicas(apps, ss, expected_replicas):
    """e2estatefulset.WaitForStatusReplicas"""
    _wait_for_status_field(apps, ss, expected_replicas, "replicas", "replicas")


# --------------------------------------------------------------------------- apps/wait.go


def _log_pods_not_at_update_revision(set_, pods):
    logf("Waiting for StatefulSet %s/%s to complete update", set_.metadata.namespace,
         set_.metadata.name)
    sort_stateful_pods(pods)
    update_revision = status_field(set_, "update_revision", "")
    for p in pods.items:
        if pod_label(p, STATEFUL_SET_REVISION_LABEL) != update_revision:
            logf("Waiting for Pod %s/%s to have revision %s update revision %s",
                 p.metadata.namespace, p.metadata.name, update_revision,
                 pod_label(p, STATEFUL_SET_REVISION_LABEL))


def wait_for_partitioned_rolling_update(apps, core, set_):
    """waitForPartitionedRollingUpdate: all pods exist and those at ordinals at or above
    the partition carry the update revision (partition <= 0: the update is complete).
    The pods are indexed in the server's list order, as upstream."""
    us = set_.spec.update_strategy
    if us is None or us.type != "RollingUpdate":
        fail("StatefulSet %s/%s attempt to wait for partitioned update with updateStrategy %s",
             set_.metadata.namespace, set_.metadata.name, us.type if us is not None else "")
    if us.rolling_update is None or us.rolling_update.partition is None:
        fail("StatefulSet %s/%s attempt to wait for partitioned update with nil RollingUpdate "
             "or nil Partition", set_.metadata.namespace, set_.metadata.name)
    out = {"set": set_, "pods": None}

    def until(set2, pods2):
        out["set"], out["pods"] = set2, pods2
        partition = partition_of(set2)
        if len(pods2.items) < replicas_of(set2):
            return False, None
        if partition <= 0 and status_field(set2, "update_revision", "") != \
                status_field(set2, "current_revision", ""):
            _log_pods_not_at_update_revision(set2, pods2)
            return False, None
        for i in range(replicas_of(set2) - 1, partition - 1, -1):
            p = pods2.items[i]
            if pod_label(p, STATEFUL_SET_REVISION_LABEL) != status_field(set2, "update_revision",
                                                                          ""):
                logf("Waiting for Pod %s/%s to have revision %s update revision %s",
                     p.metadata.namespace, p.metadata.name,
                     status_field(set2, "update_revision", ""),
                     pod_label(p, STATEFUL_SET_REVISION_LABEL))
                return False, None
        return True, None

    wait_for_state(apps, core, set_, until)
    return out["set"], out["pods"]


def wait_for_status(apps, core, set_):
    """waitForStatus: until status.observedGeneration >= the set's generation; returns the
    set with that status."""
    out = {"set": set_}

    def until(set2, pods):
        if status_field(set2, "observed_generation") >= generation(set_):
            out["set"] = set2
            return True, None
        return False, None

    wait_for_state(apps, core, set_, until)
    return out["set"]


def wait_for_pod_not_ready(apps, core, set_, pod_name):
    """waitForPodNotReady: (set, pods) once the pod exists without a Ready condition."""
    out = {"set": set_, "pods": None}

    def until(set2, pods2):
        out["set"], out["pods"] = set2, pods2
        for p in pods2.items:
            if p.metadata.name == pod_name:
                return not is_pod_ready(p), None
        return False, None

    wait_for_state(apps, core, set_, until)
    return out["set"], out["pods"]


def wait_for_rolling_update(apps, core, set_):
    """waitForRollingUpdate: all pods exist and status.updateRevision ==
    status.currentRevision; returns (set, pods)."""
    us = set_.spec.update_strategy
    if us is None or us.type != "RollingUpdate":
        fail("StatefulSet %s/%s attempt to wait for rolling update with updateStrategy %s",
             set_.metadata.namespace, set_.metadata.name, us.type if us is not None else "")
    out = {"set": set_, "pods": None}

    def until(set2, pods2):
        out["set"], out["pods"] = set2, pods2
        if len(pods2.items) < replicas_of(set2):
            return False, None
        if status_field(set2, "update_revision", "") != status_field(set2, "current_revision",
                                                                     ""):
            _log_pods_not_at_update_revision(set2, pods2)
            return False, None
        return True, None

    wait_for_state(apps, core, set_, until)
    return out["set"], out["pods"]


def wait_for_running_and_not_ready(core, num_stateful_pods, ss):
    """waitForRunningAndNotReady"""
    wait_for_running(core, num_stateful_pods, 0, ss)


# --------------------------------------------------------------------------- statefulset.go


def http_probe():
    """httpProbe: GET /index.html on port 80, period 1 s, success 1, failure 1."""
    return client.V1Probe(http_get=client.V1HTTPGetAction(path="/index.html", port=80),
                          period_seconds=1, success_threshold=1, failure_threshold=1)


HTTP_PROBE_PATH = "/index.html"  # httpProbe.HTTPGet.Path


def set_http_probe(ss):
    """setHTTPProbe"""
    ss.spec.template.spec.containers[0].readiness_probe = http_probe()


def break_http_probe(core, kubectl, ss):
    """breakHTTPProbe (error text or None)."""
    path = HTTP_PROBE_PATH
    if path == "":
        return "path expected to be not empty: %s" % path
    # Ignore 'mv' errors to make this idempotent.
    cmd = "mv -v /usr/local/apache2/htdocs%s /tmp/ || true" % path
    return exec_in_stateful_pods(core, kubectl, ss, cmd)


def break_pod_http_probe(kubectl, ss, pod):
    """breakPodHTTPProbe (error text or None)."""
    path = HTTP_PROBE_PATH
    if path == "":
        return "path expected to be not empty: %s" % path
    # Ignore 'mv' errors to make this idempotent.
    cmd = "mv -v /usr/local/apache2/htdocs%s /tmp/ || true" % path
    stdout, err = run_host_cmd_with_retries(kubectl, pod.metadata.namespace, pod.metadata.name,
                                            cmd, STATEFUL_SET_POLL, STATEFUL_POD_TIMEOUT)
    logf("stdout of %s on %s: %s", cmd, pod.metadata.name, stdout)
    return err


def restore_http_probe(core, kubectl, ss):
    """restoreHTTPProbe (error text or None)."""
    path = HTTP_PROBE_PATH
    if path == "":
        return "path expected to be not empty: %s" % path
    # Ignore 'mv' errors to make this idempotent.
    cmd = "mv -v /tmp%s /usr/local/apache2/htdocs/ || true" % path
    return exec_in_stateful_pods(core, kubectl, ss, cmd)


def restore_pod_http_probe(kubectl, ss, pod):
    """restorePodHTTPProbe (error text or None)."""
    path = HTTP_PROBE_PATH
    if path == "":
        return "path expected to be not empty: %s" % path
    # Ignore 'mv' errors to make this idempotent.
    cmd = "mv -v /tmp%s /usr/local/apache2/htdocs/ || true" % path
    stdout, err = run_host_cmd_with_retries(kubectl, pod.metadata.namespace, pod.metadata.name,
                                            cmd, STATEFUL_SET_POLL, STATEFUL_POD_TIMEOUT)
    logf("stdout of %s on %s: %s", cmd, pod.metadata.name, stdout)
    return err


def get_stateful_set_pod_name_at_index(index, ss):
    """getStatefulSetPodNameAtIndex"""
    return "%s-%d" % (ss.metadata.name, index)


def delete_stateful_pod_at_index(core, index, ss):
    """deleteStatefulPodAtIndex: DELETE with gracePeriodSeconds 0."""
    name = get_stateful_set_pod_name_at_index(index, ss)
    try:
        core.delete_namespaced_pod(name, ss.metadata.namespace,
                                   body=client.V1DeleteOptions(grace_period_seconds=0))
    except ApiException as err:
        fail("Failed to delete stateful pod %s for StatefulSet %s/%s: %s", name,
             ss.metadata.namespace, ss.metadata.name, describe_error(err))


def update_stateful_set_with_retries(apps, namespace, name, apply_update):
    """updateStatefulSetWithRetries: PollUntilContextTimeout(10ms, 1m, immediate) of GET,
    apply_update, PUT; a GET error ends it, a PUT error is retried. (set, error text or
    None)."""
    state = {"set": None, "update_err": None}

    def condition():
        try:
            state["set"] = apps.read_namespaced_stateful_set(name, namespace)
        except ApiException as err:
            state["set"] = None
            return False, describe_error(err)
        # Apply the update, then attempt to push it to the apiserver.
        apply_update(state["set"])
        try:
            state["set"] = apps.replace_namespaced_stateful_set(name, namespace, state["set"])
        except ApiException as err:
            state["set"] = None
            state["update_err"] = describe_error(err)
            return False, None
        logf("Updating stateful set %s", name)
        return True, None

    poll_err = poll(0.01, 60, condition, timeout_error=CONTEXT_DEADLINE)
    return state["set"], poll_err


def get_stateful_set(apps, namespace, name):
    """getStatefulSet"""
    try:
        return apps.read_namespaced_stateful_set(name, namespace)
    except ApiException as err:
        fail("Failed to get StatefulSet %s/%s: %s", namespace, name, describe_error(err))


def confirm_stateful_pod_count(core, count, ss, timeout, hard):
    """confirmStatefulPodCount: for `timeout` seconds the set's pod count must be `count`
    (hard: any other count fails the test; soft: it is logged)."""
    start = time.monotonic()
    deadline = start + timeout
    t = time.monotonic()
    while t < deadline:
        pod_list = get_pod_list(core, ss)
        stateful_pod_count = len(pod_list.items)
        if stateful_pod_count != count:
            log_pod_states(pod_list.items)
            if hard:
                fail("StatefulSet %s scaled unexpectedly scaled to %d -> %d replicas",
                     ss.metadata.name, count, len(pod_list.items))
            else:
                logf("StatefulSet %s has not reached scale %d, at %d", ss.metadata.name, count,
                     stateful_pod_count)
            time.sleep(1)
            t = time.monotonic()
            continue
        logf("Verifying statefulset %s doesn't scale past %d for another %.3fs",
             ss.metadata.name, count, deadline - t)
        time.sleep(1)
        t = time.monotonic()


def _revision_message(what, pod, value, other):
    return "Pod %s/%s %s %s%s" % (pod.metadata.namespace, pod.metadata.name, what, value, other)


def rollback_test(apps, core, kubectl, ns, ss):
    """rollbackTest: a rolling update to NewWebserverImage and back to the old image (the
    roll back reuses the first revision), each with pod 1 unready while the update starts."""
    set_http_probe(ss)
    try:
        ss = apps.create_namespaced_stateful_set(ns, ss)
    except ApiException as err:
        fail("unexpected error: %s", describe_error(err))
    wait_for_running_and_ready(core, replicas_of(ss), ss)
    ss = wait_for_status(apps, core, ss)
    current_revision, update_revision = status_field(ss, "current_revision", ""), \
        status_field(ss, "update_revision", "")
    expect_equal(current_revision, update_revision,
                 "StatefulSet %s/%s created with update revision %s not equal to current "
                 "revision %s" % (ss.metadata.namespace, ss.metadata.name, update_revision,
                                  current_revision))
    pods = get_pod_list(core, ss)
    for p in pods.items:
        expect_equal(pod_label(p, STATEFUL_SET_REVISION_LABEL), current_revision,
                     "Pod %s/%s revision %s is not equal to current revision %s" % (
                         p.metadata.namespace, p.metadata.name,
                         pod_label(p, STATEFUL_SET_REVISION_LABEL), current_revision))
    sort_stateful_pods(pods)
    err = break_pod_http_probe(kubectl, ss, pods.items[1])
    expect_no_err(err)
    ss, _ = wait_for_pod_not_ready(apps, core, ss, pods.items[1].metadata.name)
    new_image = NEW_WEBSERVER_IMAGE
    old_image = ss.spec.template.spec.containers[0].image

    by("Updating StatefulSet template: update image from %s to %s" % (old_image, new_image))
    expect_not_equal(old_image, new_image,
                     "Incorrect test setup: should update to a different image")

    def set_new_image(u):
        u.spec.template.spec.containers[0].image = new_image

    ss, err = update_stateful_set_with_retries(apps, ns, ss.metadata.name, set_new_image)
    expect_no_err(err)

    by("Creating a new revision")
    ss = wait_for_status(apps, core, ss)
    current_revision, update_revision = status_field(ss, "current_revision", ""), \
        status_field(ss, "update_revision", "")
    expect_not_equal(current_revision, update_revision,
                     "Current revision should not equal update revision during rolling update")

    by("Updating Pods in reverse ordinal order")
    pods = get_pod_list(core, ss)
    sort_stateful_pods(pods)
    err = restore_pod_http_probe(kubectl, ss, pods.items[1])
    expect_no_err(err)
    ss, _ = wait_for_pod_ready(apps, core, ss, pods.items[1].metadata.name)
    ss, pods = wait_for_rolling_update(apps, core, ss)
    expect_equal(status_field(ss, "current_revision", ""), update_revision,
                 "StatefulSet %s/%s current revision %s does not equal update revision %s on "
                 "update completion" % (ss.metadata.namespace, ss.metadata.name,
                                        status_field(ss, "current_revision", ""),
                                        update_revision))
    for p in pods.items:
        expect_equal(p.spec.containers[0].image, new_image,
                     " Pod %s/%s has image %s not have new image %s" % (
                         p.metadata.namespace, p.metadata.name, p.spec.containers[0].image,
                         new_image))
        expect_equal(pod_label(p, STATEFUL_SET_REVISION_LABEL), update_revision,
                     "Pod %s/%s revision %s is not equal to update revision %s" % (
                         p.metadata.namespace, p.metadata.name,
                         pod_label(p, STATEFUL_SET_REVISION_LABEL), update_revision))

    by("Rolling back to a previous revision")
    err = break_pod_http_probe(kubectl, ss, pods.items[1])
    expect_no_err(err)
    ss, _ = wait_for_pod_not_ready(apps, core, ss, pods.items[1].metadata.name)
    prior_revision = current_revision

    def set_old_image(u):
        u.spec.template.spec.containers[0].image = old_image

    ss, err = update_stateful_set_with_retries(apps, ns, ss.metadata.name, set_old_image)
    expect_no_err(err)
    ss = wait_for_status(apps, core, ss)
    current_revision, update_revision = status_field(ss, "current_revision", ""), \
        status_field(ss, "update_revision", "")
    expect_equal(prior_revision, update_revision,
                 "Prior revision should equal update revision during roll back")
    expect_not_equal(current_revision, update_revision,
                     "Current revision should not equal update revision during roll back")

    by("Rolling back update in reverse ordinal order")
    pods = get_pod_list(core, ss)
    sort_stateful_pods(pods)
    restore_pod_http_probe(kubectl, ss, pods.items[1])  # (upstream ignores the error here)
    ss, _ = wait_for_pod_ready(apps, core, ss, pods.items[1].metadata.name)
    ss, pods = wait_for_rolling_update(apps, core, ss)
    expect_equal(status_field(ss, "current_revision", ""), prior_revision,
                 "StatefulSet %s/%s current revision %s does not equal prior revision %s on "
                 "rollback completion" % (ss.metadata.namespace, ss.metadata.name,
                                          status_field(ss, "current_revision", ""),
                                          update_revision))
    for p in pods.items:
        expect_equal(p.spec.containers[0].image, old_image,
                     "Pod %s/%s has image %s not equal to previous image %s" % (
                         p.metadata.namespace, p.metadata.name, p.spec.containers[0].image,
                         old_image))
        expect_equal(pod_label(p, STATEFUL_SET_REVISION_LABEL), prior_revision,
                     "Pod %s/%s revision %s is not equal to prior revision %s" % (
                         p.metadata.namespace, p.metadata.name,
                         pod_label(p, STATEFUL_SET_REVISION_LABEL), prior_revision))


class GoRoutine:
    """A `go func() { defer wg.Done(); ... }()` whose result the test reads after
    wg.Wait()."""

    def __init__(self, fn):
        self.result = None
        self.exc = None
        self._thread = threading.Thread(target=self._run, args=(fn,), daemon=True)
        self._thread.start()

    def _run(self, fn):
        try:
            self.result = fn()
        except BaseException as err:  # ginkgo.GinkgoRecover: reported at Wait
            self.exc = err

    def wait(self):
        """wg.Wait()"""
        self._thread.join()
        if self.exc is not None:
            raise self.exc
        return self.result
