"""Framework helpers for the batch/v1 conformance ports (test_job.py, test_cronjob.py).

They stand in for these pieces of the upstream e2e framework (kubernetes/kubernetes v1.32,
test/e2e/...), written against the official Python client like e2e_framework.py (which they
build on and do not change):

* ``JobClient`` / ``CronJobClient``: ``f.ClientSet.BatchV1().Jobs(ns)`` /
  ``.CronJobs(ns)`` (get, create, update, updateStatus, patch, list, delete,
  deleteCollection), see "Wire fidelity" below.
* test/e2e/framework/job: ``new_test_job`` / ``new_test_job_on_node`` (fixtures.go
  NewTestJob / NewTestJobOnNode), ``JOB_TIMEOUT`` / ``JOB_SELECTOR_KEY`` (const.go),
  ``get_job``, ``get_job_pods``, ``get_all_running_job_pods``, ``create_job``, ``update_job``
  (rest.go), ``wait_for_job_pods_running``, ``wait_for_job_complete``,
  ``wait_for_job_failed``, ``wait_for_job_condition``, ``wait_for_job_ready``,
  ``wait_for_job_state`` (wait.go).
* pkg/controller/job/util: ``is_job_finished`` (IsJobFinished / FinishedCondition).
* e2eresource.DeleteResourceAndWaitForGC for a Job: ``delete_job_and_wait_for_gc``, a
  wrapper around e2e_resource.py's ``delete_resource_and_wait_for_gc`` (which gets and
  deletes the Job through ``JobClient``).
* ``get_random_ready_schedulable_node``: e2enode.GetRandomReadySchedulableNode, e2e_rc.py's,
  re-exported.
* ``open_watch``: ``client.Watch(ctx, opts)`` + ``framework.ExpectNoError(err)``.
* ``eventually`` / ``consistently`` with ``handle_retry`` and ``get_object``:
  ``framework.Gomega().Eventually(ctx, ...).WithTimeout(..).WithPolling(..).Should(
  framework.MakeMatcher(...))``, ``gomega.Consistently``, ``framework.HandleRetry`` and
  ``framework.GetObject`` (framework/get.go, framework/expect.go).

Wire fidelity: the installed python3-kubernetes (22.6) models batch/v1 as of Kubernetes 1.22.
Its V1JobSpec has no podFailurePolicy, podReplacementPolicy, backoffLimitPerIndex,
maxFailedIndexes, successPolicy or managedBy, V1JobStatus no ready, terminating or
failedIndexes, V1CronJobSpec no timeZone (and the pod template models lack the newer
pod fields). client-go v1.32 knows them all: its Get-modify-Update sends back every field
the server returned. So ``JobClient``/``CronJobClient`` talk JSON (ApiClient.call_api) and
hand back typed models that remember the JSON they were decoded from; when such a model is
sent again (update, updateStatus), the fields the model does not know are put back from
that JSON, the fields it knows are written from the model (timestamps as client-go writes
them, GoWireApiClient). Fields a test needs that the models lack are set with
``set_extra_field`` (e.g. spec.podFailurePolicy) and written the same way. As client-go's
encoder does, request bodies carry apiVersion and kind.
"""

import json
import time

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import (BUSYBOX_IMAGE, PAUSE_IMAGE, POLL, Watcher, describe_error, fail,
                           pod_phase, rand_string, raw_call, reason_for, selector_from_set,
                           to_model)
from e2e_rc import get_random_ready_schedulable_node  # noqa: F401  (re-exported for the tests)
from e2e_resource import KIND_JOB, delete_resource_and_wait_for_gc

JOB_TIMEOUT = 15 * 60      # e2ejob.JobTimeout
JOB_SELECTOR_KEY = "job"   # e2ejob.JobSelectorKey

# batchv1 constants
JOB_COMPLETE = "Complete"
JOB_FAILED = "Failed"
JOB_SUSPENDED = "Suspended"
JOB_FAILURE_TARGET = "FailureTarget"
JOB_SUCCESS_CRITERIA_MET = "SuccessCriteriaMet"
JOB_REASON_COMPLETIONS_REACHED = "CompletionsReached"
JOB_COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"


# --------------------------------------------------------------------------- test budget


# --------------------------------------------------------------------------- wire fidelity


def _merge_unknown(model, wire, raw):
    """Put back into ``wire`` (the model serialized) the fields of ``raw`` (the JSON the
    model was decoded from) that the model's classes do not know."""
    if hasattr(model, "openapi_types") and hasattr(model, "attribute_map"):
        if not (isinstance(wire, dict) and isinstance(raw, dict)):
            return
        known = set(model.attribute_map.values())
        for key, value in raw.items():
            if key not in known and key not in wire:
                wire[key] = value
        for attr, key in model.attribute_map.items():
            if key in wire and key in raw:
                _merge_unknown(getattr(model, attr), wire[key], raw[key])
    elif isinstance(model, (list, tuple)):
        if isinstance(wire, list) and isinstance(raw, list):
            for m, w, r in zip(model, wire, raw):
                _merge_unknown(m, w, r)
    elif isinstance(model, dict):
        if isinstance(wire, dict) and isinstance(raw, dict):
            for key, value in model.items():
                if key in wire and key in raw:
                    _merge_unknown(value, wire[key], raw[key])


def set_extra_field(model, path, value):
    """Set a field the installed client's models may lack: ``path`` is the JSON path (e.g.
    ["spec", "podFailurePolicy"]); a model attribute of that name is used when the client has
    one, otherwise the value is kept beside the model and written with it."""
    target = model
    for key in path[:-1]:
        attr = _attr_for(target, key)
        target = getattr(target, attr) if attr else None
        if target is None:
            break
    if target is not None:
        attr = _attr_for(target, path[-1])
        if attr is not None:
            setattr(target, attr, value)
            return
    raw = getattr(model, "_raw", None)
    if raw is None:
        raw = {}
        model._raw = raw
    node = raw
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value


def _attr_for(model, json_key):
    for attr, key in getattr(model, "attribute_map", {}).items():
        if key == json_key:
            return attr
    return None


def wire_body(api_client, obj, api_version=None, kind=None):
    """The JSON client-go would send for ``obj`` (a typed model, possibly with ``_raw``)."""
    wire = api_client.sanitize_for_serialization(obj)
    raw = getattr(obj, "_raw", None)
    if raw is not None:
        _merge_unknown(obj, wire, raw)
    if api_version is not None:
        wire["apiVersion"] = api_version
    if kind is not None:
        wire["kind"] = kind
    return wire


def decode(raw, model_name):
    """A typed model from JSON, remembering the JSON (see the module doc)."""
    obj = to_model(raw, model_name)
    obj._raw = raw
    if model_name.endswith("List") and isinstance(raw, dict):
        for item, item_raw in zip(obj.items or [], raw.get("items") or []):
            item._raw = item_raw
    return obj


class _BatchResourceClient:
    """A typed client of one namespaced batch/v1 resource over JSON."""

    GROUP_VERSION = "batch/v1"
    PLURAL = None
    KIND = None

    def __init__(self, api_client, namespace):
        self.api_client = api_client
        self.namespace = namespace

    def _path(self, name=None, subresource=None):
        if self.namespace:
            path = "/apis/%s/namespaces/%s/%s" % (self.GROUP_VERSION, self.namespace,
                                                  self.PLURAL)
        else:
            path = "/apis/%s/%s" % (self.GROUP_VERSION, self.PLURAL)
        if name is not None:
            path += "/" + name
        if subresource is not None:
            path += "/" + subresource
        return path

    def _call(self, method, path, body=None, headers=None, query=None):
        return raw_call(self.api_client, method, path, body=body, headers=headers,
                        query=query)

    def _model(self):
        return "V1" + self.KIND

    def get(self, name):
        return decode(self._call("GET", self._path(name)), self._model())

    def create(self, obj):
        body = wire_body(self.api_client, obj, self.GROUP_VERSION, self.KIND)
        return decode(self._call("POST", self._path(), body=body), self._model())

    def update(self, obj):
        body = wire_body(self.api_client, obj, self.GROUP_VERSION, self.KIND)
        return decode(self._call("PUT", self._path(obj.metadata.name), body=body),
                      self._model())

    def update_status(self, obj):
        body = wire_body(self.api_client, obj, self.GROUP_VERSION, self.KIND)
        return decode(self._call("PUT", self._path(obj.metadata.name, "status"), body=body),
                      self._model())

    def patch(self, name, patch_type, data, subresource=None):
        """Patch(ctx, name, pt, data, opts, subresources...): ``data`` is the patch text."""
        body = json.loads(data)
        return decode(self._call("PATCH", self._path(name, subresource), body=body,
                                 headers={"Content-Type": patch_type}), self._model())

    def list(self, label_selector=None):
        query = {"labelSelector": label_selector} if label_selector else None
        return decode(self._call("GET", self._path(), query=query), self._model() + "List")

    def delete(self, name, propagation_policy=None):
        body = {}  # metav1.DeleteOptions as client-go sends it (omitempty fields)
        if propagation_policy is not None:
            body["propagationPolicy"] = propagation_policy
        return self._call("DELETE", self._path(name), body=body)

    def delete_collection(self, propagation_policy=None, label_selector=None):
        body = {}  # metav1.DeleteOptions as client-go sends it (omitempty fields)
        if propagation_policy is not None:
            body["propagationPolicy"] = propagation_policy
        query = {"labelSelector": label_selector} if label_selector else None
        return self._call("DELETE", self._path(), body=body, query=query)


class JobClient(_BatchResourceClient):
    """f.ClientSet.BatchV1().Jobs(ns); ns "" is all namespaces (List only)."""
    PLURAL = "jobs"
    KIND = "Job"


class CronJobClient(_BatchResourceClient):
    """f.ClientSet.BatchV1().CronJobs(ns); ns "" is all namespaces (List only)."""
    PLURAL = "cronjobs"
    KIND = "CronJob"


# --------------------------------------------------------------------------- gomega


class StopTrying(Exception):
    """gomega.StopTrying: ends an Eventually/Consistently at once."""


def should_retry(err):
    """framework.ShouldRetry: Retry-After, Timeout, ServerTimeout, TooManyRequests,
    ServiceUnavailable (InternalError with a retry hint is not distinguished here)."""
    if not isinstance(err, ApiException):
        return False
    if err.headers and err.headers.get("Retry-After"):
        return True
    return err.status in (429, 503, 504) or reason_for(err) in ("Timeout", "ServerTimeout")


def handle_retry(get):
    """framework.HandleRetry: an error that ShouldRetry allows is a failed attempt; any
    other error stops polling ("Unexpected final error while getting ...")."""

    def wrapped():
        try:
            return get()
        except ApiException as err:
            if should_retry(err):
                raise _RetryAttempt(describe_error(err))
            raise StopTrying("Unexpected final error while getting object: %s" %
                             describe_error(err))

    return wrapped


class _RetryAttempt(Exception):
    pass


def get_object(get_fn, *args, **kwargs):
    """framework.GetObject(get, name, options): HandleRetry around the Get."""
    return handle_retry(lambda: get_fn(*args, **kwargs))


def eventually(get, match, timeout, polling=POLL):
    """framework.Gomega().Eventually(ctx, get).WithTimeout(timeout).WithPolling(polling)
    .Should(framework.MakeMatcher(match)): ``get()`` returns the value (raising StopTrying
    or an error), ``match(value)`` returns None when satisfied or the failure message.
    The first attempt is immediate. Returns None or the error text."""
    start = time.monotonic()
    deadline = start + timeout
    last = "no attempt"
    while True:
        try:
            value = get()
        except StopTrying as stop:
            return "%s" % stop
        except _RetryAttempt as err:
            last = str(err)
        else:
            try:
                failure = match(value)
            except StopTrying as stop:
                return "%s" % stop
            if failure is None:
                return None
            last = failure
        if time.monotonic() + polling > deadline:
            return "Timed out after %.3fs.\n%s" % (time.monotonic() - start, last)
        time.sleep(polling)


def consistently(get, match, duration, polling=POLL):
    """gomega.Consistently(ctx, get).WithPolling(polling).WithTimeout(duration).Should(m):
    ``match(value)`` must hold at every poll until ``duration`` has passed. Returns None or
    the failure text."""
    start = time.monotonic()
    deadline = start + duration
    while True:
        try:
            value = get()
        except (StopTrying, _RetryAttempt) as err:
            return "Failed after %.3fs.\n%s" % (time.monotonic() - start, err)
        failure = match(value)
        if failure is not None:
            return "Failed after %.3fs.\n%s" % (time.monotonic() - start, failure)
        if time.monotonic() + polling > deadline:
            return None
        time.sleep(polling)


# --------------------------------------------------------------------------- fixtures.go


def new_test_job(behavior, name, r_pol, parallelism, completions, active_deadline_seconds,
                 backoff_limit):
    """e2ejob.NewTestJob"""
    any_node = ""
    return new_test_job_on_node(behavior, name, r_pol, parallelism, completions,
                                active_deadline_seconds, backoff_limit, any_node)


def new_test_job_on_node(behavior, name, r_pol, parallelism, completions,
                         active_deadline_seconds, backoff_limit, node_name):
    """e2ejob.NewTestJobOnNode. The container's image is imageutils.BusyBox
    (registry.k8s.io/e2e-test-images/busybox:1.36.1-1) upstream, here the nodes' offline
    busybox 1.36 (BUSYBOX_IMAGE); "notTerminate" runs imageutils.GetPauseImageName(), the
    same reference as upstream's (PAUSE_IMAGE). Upstream's ``Command: []string{}`` is
    omitted on the wire (omitempty), so it is left unset here."""
    manual_selector = False
    job = client.V1Job(
        kind="Job",
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1JobSpec(
            active_deadline_seconds=active_deadline_seconds,
            parallelism=parallelism,
            completions=completions,
            backoff_limit=backoff_limit,
            manual_selector=manual_selector,
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels={JOB_SELECTOR_KEY: name}),
                spec=client.V1PodSpec(
                    restart_policy=r_pol,
                    volumes=[client.V1Volume(name="data",
                                             empty_dir=client.V1EmptyDirVolumeSource())],
                    containers=[client.V1Container(
                        name="c",
                        image=BUSYBOX_IMAGE,
                        volume_mounts=[client.V1VolumeMount(mount_path="/data", name="data")],
                        security_context=client.V1SecurityContext(),
                    )],
                ),
            ),
        ),
    )
    pod_spec = job.spec.template.spec
    container = pod_spec.containers[0]
    if len(node_name) > 0:
        pod_spec.node_selector = {"kubernetes.io/hostname": node_name}
    if behavior == "neverTerminate":
        container.command = ["sleep", "1000000"]
        pod_spec.termination_grace_period_seconds = 1
    elif behavior == "notTerminate":
        container.image = PAUSE_IMAGE
    elif behavior == "fail":
        container.command = ["/bin/sh", "-c", "exit 1"]
    elif behavior == "failOddSucceedEven":
        container.command = ["sh", "-c"]
        container.args = ["""
			if [ $(expr ${JOB_COMPLETION_INDEX} % 2) -ne 0 ]; then
				exit 1
			else
				exit 0
			fi
			"""]
    elif behavior == "succeed":
        container.command = ["/bin/sh", "-c", "exit 0"]
    elif behavior == "randomlySucceedOrFail":
        container.command = ["/bin/sh", "-c", "exit $(( $RANDOM / 16384 ))"]
    elif behavior == "failOnce":
        # Fail the first the container of the pod is run, and succeed the second time.
        # Checks for file on a data volume. If present, succeed.  If not, create but fail.
        # If RestartPolicy is Never, the nodeName should be set to ensure all job pods run
        # on a single node and the volume will be mounted from a hostPath instead.
        _setup_host_path_directory(job)
        container.command = ["/bin/sh", "-c"]
        container.args = ["""
			if [[ -r /data/foo ]]
			then
				exit 0
			else
				touch /data/foo
				exit 1
			fi
		"""]
    elif behavior == "notTerminateOncePerIndex":
        # Use marker files per index. If the given marker file already exists then
        # terminate successfully. Otherwise create the marker file and sleep "forever"
        # awaiting delete request.
        _setup_host_path_directory(job)
        pod_spec.termination_grace_period_seconds = 1
        container.command = ["/bin/sh", "-c"]
        container.args = ["""
			if [[ -r /data/foo-$JOB_COMPLETION_INDEX ]]
			then
				exit 0
			else
				touch /data/foo-$JOB_COMPLETION_INDEX
				sleep 1000000
			fi
		"""]
        # Add readiness probe to allow the test client to check if the marker file is
        # already created before evicting the Pod.
        container.readiness_probe = client.V1Probe(
            period_seconds=1,
            _exec=client.V1ExecAction(
                command=["/bin/sh", "-c", "cat /data/foo-$JOB_COMPLETION_INDEX"]))
    return job


def _setup_host_path_directory(job):
    """setupHostPathDirectory: a hostPath (DirectoryOrCreate) under /tmp/job-e2e/ when the
    Job is pinned to a node, and a privileged container (the nodes are not Windows)."""
    spec = job.spec.template.spec
    if "kubernetes.io/hostname" in (spec.node_selector or {}):
        random_dir = "/tmp/job-e2e/" + rand_string(10)
        spec.volumes[0] = client.V1Volume(
            name=spec.volumes[0].name,
            host_path=client.V1HostPathVolumeSource(path=random_dir, type="DirectoryOrCreate"))
        privileged = True  # !framework.NodeOSDistroIs("windows")
        spec.containers[0].security_context.privileged = privileged


# --------------------------------------------------------------------------- rest.go


def get_job(api_client, ns, name):
    """e2ejob.GetJob (raises ApiException)."""
    return JobClient(api_client, ns).get(name)


def get_job_pods(core, ns, job_name):
    """e2ejob.GetJobPods: the pods labelled job=<jobName> (raises ApiException)."""
    label = selector_from_set({JOB_SELECTOR_KEY: job_name})
    return core.list_namespaced_pod(ns, label_selector=label)


def get_all_running_job_pods(core, ns, job_name):
    """e2ejob.GetAllRunningJobPods"""
    pod_list = get_job_pods(core, ns, job_name)
    return [p for p in pod_list.items if pod_phase(p) == "Running"]


def create_job(api_client, ns, job):
    """e2ejob.CreateJob (raises ApiException)."""
    return JobClient(api_client, ns).create(job)


def update_job(api_client, ns, job):
    """e2ejob.UpdateJob (raises ApiException)."""
    return JobClient(api_client, ns).update(job)


# --------------------------------------------------------------------------- wait.go


def _conditions(job):
    return (job.status.conditions if job.status is not None else None) or []


def _is_condition_true(job, condition):
    return any(c.type == condition and c.status == "True" for c in _conditions(job))


def is_job_failed(job):
    return _is_condition_true(job, JOB_FAILED)


def is_job_completed(job):
    return _is_condition_true(job, JOB_COMPLETE)


def is_job_finished(job):
    """jobutil.IsJobFinished (pkg/controller/job/util): a Complete or Failed condition with
    status True."""
    return any(c.type in (JOB_COMPLETE, JOB_FAILED) and c.status == "True"
               for c in _conditions(job))


def _kobj(job):
    return "%s/%s" % (job.metadata.namespace, job.metadata.name)


def _status_int(job, field):
    return (getattr(job.status, field) if job.status is not None else None) or 0


def _pods_summary(pods):
    return json.dumps([{"name": p.metadata.name, "phase": pod_phase(p),
                        "node": p.spec.node_name} for p in pods.items])


def wait_for_job_pods_running(core, ns, job_name, expected_count):
    """e2ejob.WaitForJobPodsRunning -> waitForJobPodsInPhase(Running, JobTimeout)."""
    return _wait_for_job_pods_in_phase(core, ns, job_name, expected_count, "Running",
                                       JOB_TIMEOUT)


def _wait_for_job_pods_in_phase(core, ns, job_name, expected_count, phase, timeout):
    get = handle_retry(lambda: get_job_pods(core, ns, job_name))

    def match(pods):
        count = sum(1 for p in pods.items if pod_phase(p) == phase)
        if count == expected_count:
            return None
        return "job %r expected %d pods in %r phase, but got %d:\n%s" % (
            "%s/%s" % (ns, job_name), expected_count, phase, count, _pods_summary(pods))

    return eventually(get, match, timeout, POLL)


def wait_for_job_complete(api_client, ns, job_name, reason, completions):
    """e2ejob.WaitForJobComplete: status.succeeded reaches ``completions`` (a Failed job
    stops the wait), then a Complete condition with ``reason``."""
    jobs = JobClient(api_client, ns)

    def get():
        job = jobs.get(job_name)
        if is_job_failed(job):
            raise StopTrying("job failed while waiting for its completion: %s"
                             % json.dumps(_status_summary(job)))
        return job

    def match(job):
        if _status_int(job, "succeeded") == completions:
            return None
        return "expected job %r to have %s successful pods. got %s" % (
            _kobj(job), completions, _status_int(job, "succeeded"))

    err = eventually(handle_retry(get), match, JOB_TIMEOUT, POLL)
    if err is not None:
        return err
    return wait_for_job_condition(api_client, ns, job_name, JOB_COMPLETE, reason)


def wait_for_job_failed(api_client, ns, job_name):
    """e2ejob.WaitForJobFailed: a Failed condition (a Complete job stops the wait)."""
    jobs = JobClient(api_client, ns)

    def get():
        job = jobs.get(job_name)
        if is_job_completed(job):
            raise StopTrying("job completed while waiting for its failure: %s"
                             % json.dumps(_status_summary(job)))
        return job

    def match(job):
        if is_job_failed(job):
            return None
        return "expected job %r to fail (status %s)" % (_kobj(job),
                                                       json.dumps(_status_summary(job)))

    return eventually(handle_retry(get), match, JOB_TIMEOUT, POLL)


def wait_for_job_condition(api_client, ns, job_name, c_type, reason):
    """e2ejob.WaitForJobCondition: a condition of type ``c_type`` with status True and, unless
    ``reason`` is None, that reason."""
    jobs = JobClient(api_client, ns)

    def match(job):
        for c in _conditions(job):
            if c.type == c_type and c.status == "True":
                if reason is None or reason == c.reason:
                    return None
        return "expected job %r to reach the expected condition %r with reason %r " \
               "(status %s)" % (_kobj(job), c_type, "<nil>" if reason is None else reason,
                                json.dumps(_status_summary(job)))

    return eventually(get_object(jobs.get, job_name), match, JOB_TIMEOUT, POLL)


def wait_for_job_ready(api_client, ns, job_name, ready):
    """e2ejob.WaitForJobReady: status.ready equals ``ready`` (ptr.Equal: both nil, or both
    set and equal; the installed client's V1JobStatus lacks ``ready``, so it is read from
    the JSON the model was decoded from)."""

    def state(job):
        got = _status_field(job, "ready")
        if got == ready:
            return ""
        return "job does not match intended ready status"

    return wait_for_job_state(api_client, ns, job_name, JOB_TIMEOUT, state)


def _status_field(job, json_name):
    raw = getattr(job, "_raw", None)
    if isinstance(raw, dict):
        return (raw.get("status") or {}).get(json_name)
    return None


def wait_for_job_state(api_client, ns, job_name, timeout, state):
    """e2ejob.WaitForJobState: ``state(job)`` returns "" when matched."""
    jobs = JobClient(api_client, ns)

    def match(job):
        matches = state(job)
        if matches == "":
            return None
        return "%s\n%s" % (matches, json.dumps(_status_summary(job)))

    return eventually(get_object(jobs.get, job_name), match, timeout, POLL)


def _status_summary(job):
    raw = getattr(job, "_raw", None)
    if isinstance(raw, dict):
        return raw.get("status")
    return job.status.to_dict() if job.status is not None else None


# --------------------------------------------------------------------------- resources.go


def delete_job_and_wait_for_gc(api_client, core, ns, name):
    """e2eresource.DeleteResourceAndWaitForGC(ctx, c, batchinternal.Kind("Job"), ns, name):
    e2e_resource.delete_resource_and_wait_for_gc for the Job (its pods selected by
    spec.selector, replicas = spec.parallelism). ``core`` is the same clientset's
    CoreV1Api (kept for the callers). Returns None or the error text."""
    return delete_resource_and_wait_for_gc(api_client, KIND_JOB, ns, name)


# --------------------------------------------------------------------------- watches

FOREVER_TEST_TIMEOUT = 30  # wait.ForeverTestTimeout


def open_watch(list_fn, *args, **kwargs):
    """client.Watch(ctx, ListOptions) followed by framework.ExpectNoError(err): returns the
    Watcher once the watch request has been answered; fails the test if it failed."""
    w = Watcher(list_fn, *args, **kwargs)
    deadline = time.monotonic() + FOREVER_TEST_TIMEOUT
    # Watcher.started is set just before the response (or the error) is recorded.
    while w.error is None and getattr(w, "_resp", None) is None:
        if time.monotonic() > deadline:
            w.stop()
            fail("unexpected error: the watch request was not answered within %ss",
                 FOREVER_TEST_TIMEOUT)
        time.sleep(0.01)
    if w.error is not None:
        w.stop()
        fail("unexpected error: %s", describe_error(w.error))
    return w
