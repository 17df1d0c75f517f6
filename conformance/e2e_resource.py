"""The parts of upstream's e2eresource package (test/e2e/framework/resource) the ported
tests use, with the pod store and selector helpers it needs; shared by e2e_batch.py
(Jobs), e2e_daemonset.py (DaemonSets) and e2e_rc.py (ReplicationControllers), whose
``delete_*_and_wait_for_gc`` are thin wrappers around ``delete_resource_and_wait_for_gc``.

Upstream (kubernetes/kubernetes v1.32), written against the official Python client like
e2e_framework.py (which this builds on and does not change):

* resources.go: ``delete_resource_and_wait_for_gc`` (DeleteResourceAndWaitForGC with
  deleteObjectAndWaitForGC, waitForPodsInactive and waitForPodsGone): get the object
  (NotFound: nothing to do), a pod store over its selector, delete it with
  propagationPolicy Background, then wait until no pod is active and then until no pod is
  left. The interval is 100 ms below 100 replicas, 1 s below 1000, 10 s above; the first
  wait lasts 10 minutes below 5000 replicas (replicas / gcThroughput seconds plus 3 minutes
  above), the second 20 minutes.
* runtimeobj.go: ``get_runtime_object_for_kind``, ``get_selector_from_runtime_object``,
  ``get_replicas_from_runtime_object`` (a Job's replicas are its spec.parallelism, a
  DaemonSet's 0).
* test/utils/delete_resources.go: ``delete_resource`` (testutils.DeleteResource).
* test/utils/pod_store.go: ``PodStore`` (testutils.NewPodStore).
* test/e2e/framework/pod: ``filter_active_pods`` (e2epod.FilterActivePods).
* metav1.LabelSelectorAsSelector(...).String(): ``label_selector_as_selector``, the one
  implementation e2e_deployment.py has (``label_selector_as_selector_string``).

Kinds are schema.GroupKind values as ``kind.String()`` prints them (``KIND_*`` below). Only
the kinds the ported tests delete this way are ported (ReplicationController, DaemonSet,
Job); any other is refused with upstream's "Unsupported kind" errors.

Every function that waits returns None or the error text (Go's error), so that the tests
keep upstream's framework.ExpectNoError at the call site.
"""

import time

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_deployment import label_selector_as_selector_string as label_selector_as_selector
from e2e_framework import (IndexerInformerWatcher, by, describe_error, is_not_found, logf,
                           pod_phase, selector_from_set)

# schema.GroupKind.String() of the kinds upstream's callers pass
KIND_REPLICATION_CONTROLLER = "ReplicationController"  # api.Kind("ReplicationController")
KIND_DAEMON_SET = "DaemonSet.extensions"               # extensionsinternal.Kind("DaemonSet")
KIND_JOB = "Job.batch"                                 # batchinternal.Kind("Job")

GC_THROUGHPUT = 10  # gcThroughput: objects the garbage collector deletes in a second


# --------------------------------------------------------------------------- pods


def filter_active_pods(pods):
    """e2epod.FilterActivePods: neither Succeeded nor Failed, and not being deleted."""
    return [p for p in pods if pod_phase(p) not in ("Succeeded", "Failed") and
            p.metadata.deletion_timestamp is None]


class PodStore:
    """testutils.NewPodStore: a reflector (list, then watch) over the namespace's pods
    matching ``label_selector``; ``list()`` is the store's current content. The constructor
    returns once the first list has synced (upstream polls LastSyncResourceVersion every
    50ms for up to 2 minutes)."""

    def __init__(self, core, namespace, label_selector):
        self._informer = IndexerInformerWatcher(core.list_namespaced_pod, namespace,
                                                label_selector=label_selector)
        if not self._informer.synced.wait(120):
            self._informer.stop()
            raise RuntimeError("pod store of %s/%s did not sync: %s" % (
                namespace, label_selector, self._informer.error))

    def list(self):
        return list(self._informer.store.values())

    def stop(self):
        self._informer.stop()


# --------------------------------------------------------------------------- runtimeobj.go


def _job_client(api_client, ns):
    # e2e_batch imports this module; its JobClient (batch/v1 over JSON, see its module doc)
    # is taken when a Job is asked for.
    from e2e_batch import JobClient
    return JobClient(api_client, ns)


def get_runtime_object_for_kind(api_client, kind, ns, name):
    """GetRuntimeObjectForKind: the typed Get of the kind (raises ApiException; ValueError
    for a kind not ported)."""
    if kind == KIND_REPLICATION_CONTROLLER:
        return client.CoreV1Api(api_client).read_namespaced_replication_controller(name, ns)
    if kind == KIND_DAEMON_SET:
        return client.AppsV1Api(api_client).read_namespaced_daemon_set(name, ns)
    if kind == KIND_JOB:
        return _job_client(api_client, ns).get(name)
    raise ValueError("Unsupported kind when getting runtime object: %s" % kind)


def get_selector_from_runtime_object(obj):
    """GetSelectorFromRuntimeObject(...).String() (ValueError for a kind not ported)."""
    if isinstance(obj, client.V1ReplicationController):
        return selector_from_set(obj.spec.selector or {})  # labels.SelectorFromSet
    if isinstance(obj, (client.V1DaemonSet, client.V1Job)):
        return label_selector_as_selector(obj.spec.selector)
    raise ValueError("Unsupported kind when getting selector: %s" % type(obj).__name__)


def get_replicas_from_runtime_object(obj):
    """GetReplicasFromRuntimeObject (ValueError for a kind not ported)."""
    if isinstance(obj, client.V1ReplicationController):
        return obj.spec.replicas if obj.spec.replicas is not None else 0
    if isinstance(obj, client.V1DaemonSet):
        return 0
    if isinstance(obj, client.V1Job):
        return obj.spec.parallelism if obj.spec.parallelism is not None else 0
    raise ValueError("Unsupported kind when getting number of replicas: %s"
                     % type(obj).__name__)


# --------------------------------------------------------------------------- delete_resources.go


def delete_resource(api_client, kind, ns, name, propagation_policy=None):
    """testutils.DeleteResource(c, kind, ns, name, metav1.DeleteOptions{PropagationPolicy})
    (raises ApiException; ValueError for a kind not ported)."""
    if kind == KIND_REPLICATION_CONTROLLER:
        return client.CoreV1Api(api_client).delete_namespaced_replication_controller(
            name, ns, body=client.V1DeleteOptions(propagation_policy=propagation_policy))
    if kind == KIND_DAEMON_SET:
        return client.AppsV1Api(api_client).delete_namespaced_daemon_set(
            name, ns, body=client.V1DeleteOptions(propagation_policy=propagation_policy))
    if kind == KIND_JOB:
        return _job_client(api_client, ns).delete(name, propagation_policy=propagation_policy)
    raise ValueError("Unsupported kind when deleting: %s" % kind)


# --------------------------------------------------------------------------- resources.go


def delete_resource_and_wait_for_gc(api_client, kind, ns, name):
    """e2eresource.DeleteResourceAndWaitForGC(ctx, c, kind, ns, name): delete only the
    object (propagationPolicy Background) and wait for the garbage collector to delete its
    pods. Returns None or the error text."""
    by("deleting %s %s in namespace %s, will wait for the garbage collector to delete the "
       "pods" % (kind, name, ns))
    try:
        rt_object = get_runtime_object_for_kind(api_client, kind, ns, name)
    except ApiException as err:
        if is_not_found(err):
            logf("%s %s not found: %s", kind, name, describe_error(err))
            return None
        return describe_error(err)
    except ValueError as err:
        return str(err)

    def delete_object():
        return delete_resource(api_client, kind, ns, name, propagation_policy="Background")

    return _delete_object_and_wait_for_gc(client.CoreV1Api(api_client), rt_object,
                                          delete_object, ns, name, kind)


def _delete_object_and_wait_for_gc(core, rt_object, delete_object, ns, name, description):
    """deleteObjectAndWaitForGC"""
    try:
        selector = get_selector_from_runtime_object(rt_object)
        replicas = get_replicas_from_runtime_object(rt_object)
    except ValueError as err:
        return str(err)
    try:
        ps = PodStore(core, ns, selector)
    except RuntimeError as err:
        return str(err)
    try:
        start = time.monotonic()
        # testutils.RetryWithExponentialBackOff around the delete: its condition ends it on
        # the first error that is not NotFound
        try:
            delete_object()
        except ApiException as err:
            if not is_not_found(err):
                return "failed to delete object with non-retriable error: %s" % \
                    describe_error(err)
        delete_time = time.monotonic() - start
        logf("Deleting %s %s took: %.3fs", description, name, delete_time)
        if replicas < 100:
            interval = 0.1
        elif replicas < 1000:
            interval = 1
        else:
            interval = 10
        if replicas < 5000:
            timeout = 10 * 60
        else:
            # gcThroughput is pretty strict now, add a bit more to it
            timeout = replicas // GC_THROUGHPUT + 3 * 60
        err = _wait_for_pods_inactive(ps, interval, timeout)
        if err is not None:
            return "error while waiting for pods to become inactive %s: %s" % (name, err)
        logf("Terminating %s %s pods took: %.3fs", description, name,
             time.monotonic() - start - delete_time)
        # In gce, at any point, small percentage of nodes can disappear for ~10 minutes due
        # to hostError. 20 minutes should be long enough to restart VM in that case and
        # delete the pod.
        err = _wait_for_pods_gone(ps, interval, 20 * 60)
        if err is not None:
            return "error while waiting for pods gone %s: %s" % (name, err)
        return None
    finally:
        ps.stop()


def _wait_for_pods_gone(ps, interval, timeout):
    """waitForPodsGone: until no pod is left in the pod store."""
    return _wait_for_pod_store(ps, interval, timeout, list,
                               "ERROR: Pod %r still exists. Node: %r",
                               "there are %d pods left. E.g. %r on node %r")


def _wait_for_pods_inactive(ps, interval, timeout):
    """waitForPodsInactive: until no pod of the pod store is active."""
    return _wait_for_pod_store(ps, interval, timeout, filter_active_pods,
                               "ERROR: Pod %r running on %r is still active",
                               "there are %d active pods. E.g. %r on node %r")


def _wait_for_pod_store(ps, interval, timeout, select, log_format, error_format):
    """The poll of waitForPodsGone and waitForPodsInactive: PollUntilContextTimeout(interval,
    timeout, immediate) until ``select(ps.List())`` is empty; when it times out, each pod
    still selected is logged (``log_format``: name, node) and the error names the first
    (``error_format``: count, name, node)."""
    deadline = time.monotonic() + timeout
    while True:
        pods = select(ps.list())
        if not pods:
            return None
        if time.monotonic() + interval > deadline:
            for pod in pods:
                logf(log_format, pod.metadata.name, pod.spec.node_name)
            return error_format % (len(pods), pods[0].metadata.name, pods[0].spec.node_name)
        time.sleep(interval)
