"""Ports of the Job [Conformance] tests of test/e2e/apps/job.go (kubernetes/kubernetes,
v1.32): "should allow to use the pod failure policy on exit code to fail the job early",
"should create pods for an Indexed job with completion indexes and specified hostname",
"should run a job to completion when tasks sometimes fail and are locally restarted",
"should delete a job", "should adopt matching orphans and release non-matching pods",
"should apply changes to a job status", "should manage the lifecycle of a job" and "should
allow to use a pod failure policy to ignore failure matching on DisruptionTarget condition".
The e2ejob helpers they call (test/e2e/framework/job), e2eresource.DeleteResourceAndWaitForGC
and the client for batch/v1 (the installed python client predates many Job fields) are in
e2e_batch.py.

They need shepherd-controller-manager's Job controller and garbage collector, the
scheduler and the two nodes (conftest.py): the pods run for real. The DisruptionTarget test
also needs shepherd-apiserver's pods/eviction subresource (EvictV1, sent as JSON: the
installed client's create_namespaced_pod_eviction expects an Eviction back, the server
answers a Status) and kubelet-lite's exec readiness probes.

Image substitutions (the nodes never pull): e2ejob.NewTestJob's container image
imageutils.BusyBox (registry.k8s.io/e2e-test-images/busybox:1.36.1-1) becomes the nodes'
offline busybox 1.36 (BUSYBOX_IMAGE, docker.io/library/busybox:1.36, busybox-static); the
commands are upstream's, run by its /bin/sh (ash with [[ ]]). The "notTerminate" behaviour
runs imageutils.GetPauseImageName(), the same reference as upstream's (PAUSE_IMAGE). The
"notTerminateOncePerIndex" behaviour (the DisruptionTarget test) runs upstream's script and
exec readiness probe (`cat /data/foo-$JOB_COMPLETION_INDEX`) in that busybox too.

Upstream v1.32's "should manage the lifecycle of a job" has no resource-version assertions
(HaveValidResourceVersion and CompareResourceVersion came with later releases), so there
are none here.
"""

import datetime
import json
import re
import threading

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_batch import (JOB_COMPLETION_INDEX_ANNOTATION, JOB_REASON_COMPLETIONS_REACHED,
                       JOB_TIMEOUT, JobClient, create_job, delete_job_and_wait_for_gc,
                       get_all_running_job_pods, get_job, get_job_pods,
                       get_random_ready_schedulable_node, new_test_job, new_test_job_on_node,
                       set_extra_field, update_job, wait_for_job_complete, wait_for_job_failed,
                       wait_for_job_pods_running, wait_for_job_ready)
from e2e_framework import (POD_DELETE_TIMEOUT, PodClient, by, conformance, describe_error,
                           expect_no_error, fail, go_time, is_not_found, logf, rand_string,
                           raw_call, retry_on_conflict, selector_from_set,
                           wait_for_pod_condition, wait_for_pod_not_found, watch_until)

POD_START_SHORT_TIMEOUT = 2 * 60  # f.Timeouts.PodStartShort


def job_framework(new_framework):
    """SIGDescribe("Job"): NewDefaultFramework("job"), NamespacePodSecurityLevel
    privileged."""
    return new_framework("job", "privileged")


def expect_ok(err, explain):
    """framework.ExpectNoError(err, explain) for the helpers' error texts."""
    if err is not None:
        fail("%s: %s", explain, err)


def rfc3339_now():
    """metav1.Now().Rfc3339Copy(): now, to the second."""
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)


def parallelize_until(workers, pieces, do_work_piece):
    """workqueue.ParallelizeUntil(ctx, workers, pieces, doWorkPiece) with the piece's
    `defer ginkgo.GinkgoRecover()`: the pieces run on `workers` threads; a failure in a
    piece ends that piece, the others run on, and the test fails once all are done."""
    failures = []
    lock = threading.Lock()
    todo = list(range(pieces))

    def worker():
        while True:
            with lock:
                if not todo:
                    return
                index = todo.pop(0)
            try:
                do_work_piece(index)
            except BaseException as err:  # pytest.fail's exception is not an Exception
                with lock:
                    failures.append(err)

    threads = [threading.Thread(target=worker, daemon=True)
               for _ in range(min(workers, pieces))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise failures[0]


def find_condition_by_type(conditions, c_type):
    """findConditionByType"""
    for c in conditions or []:
        if c.type == c_type:
            return c
    return None


def get_controller_of(obj):
    """metav1.GetControllerOf"""
    for ref in obj.metadata.owner_references or []:
        if ref.controller:
            return ref
    return None


def _atoi(text):
    """strconv.Atoi: (value, error text or None)."""
    if text is not None and re.fullmatch(r"[+-]?[0-9]+", text):
        return int(text), None
    return 0, 'strconv.Atoi: parsing %s: invalid syntax' % json.dumps(text or "")


class WatchEventConfig:
    """watchEventConfig"""

    def __init__(self, framework, resource_version, w, job_name, watch_event, ext_job,
                 updated_metadata_type, updated_key, updated_value):
        self.framework = framework
        self.resource_version = resource_version
        self.w = w  # (list function, args, kwargs) of the cache.ListWatch
        self.job_name = job_name
        self.watch_event = watch_event
        self.ext_job = ext_job
        self.updated_metadata_type = updated_metadata_type
        self.updated_key = updated_key
        self.updated_value = updated_value


def wait_for_job_event(config):
    """waitForJobEvent: watchtools.Until from the resource version (PodStartShort); as
    delivery of events is not guaranteed, a missed event is only logged."""
    f = config.framework
    ns = f.namespace.metadata.name

    def condition(event):
        job = event.get("object")
        if isinstance(job, client.V1Job):
            key = None
            if config.updated_metadata_type == "annotation":
                key = (job.metadata.annotations or {}).get(config.updated_key, "")
            elif config.updated_metadata_type == "label":
                key = (job.metadata.labels or {}).get(config.updated_key, "")
            found = (job.metadata.name == config.ext_job.metadata.name and
                     job.metadata.namespace == ns and
                     key == config.updated_value and
                     event["type"] == config.watch_event)
            if not found:
                logf("Event %s observed for Job %s in namespace %s with labels: %s and "
                     "annotations: %s", event["type"], job.metadata.name, job.metadata.namespace,
                     job.metadata.labels, job.metadata.annotations)
                return False, None
            logf("Event %s found for Job %s in namespace %s with labels: %s and annotations: "
                 "%s", event["type"], job.metadata.name, job.metadata.namespace,
                 job.metadata.labels, job.metadata.annotations)
            return found, None
        logf("Observed event: %r", event.get("raw_object", job))
        return False, None

    list_fn, args, kwargs = config.w
    _, err = watch_until(POD_START_SHORT_TIMEOUT, config.resource_version, list_fn, *args,
                         conditions=[condition], **kwargs)
    if err is not None:
        try:
            j = JobClient(f.api_client, ns).get(config.job_name)
            details = json.dumps(j._raw)
        except ApiException as get_err:
            details = "<nil> (%s)" % describe_error(get_err)
        logf("We missed the %s event. Job details: %s", config.watch_event, details)


# Release: v1.31
# Testname: Verify Pod Failure policy allows to fail job early on exit code.
# Description: Create a job with pod failure policy, and exactly one pod failing. The exit
# code of the failed pod matches the pod failure policy triggering the Job failure.
@conformance("[sig-apps] Job should allow to use the pod failure policy on exit code to fail "
             "the job early [Conformance]")
def test_job_pod_failure_policy_fail_job_on_exit_code(new_framework):
    f = job_framework(new_framework)
    ns = f.namespace.metadata.name

    # We fail the Job's pod only once to ensure the backoffLimit is not reached and thus the
    # job is failed due to the pod failure policy with FailJob action. In order to ensure a
    # Job's pod fails once before succeeding we force the Job's Pods to be scheduled to a
    # single Node and use a hostPath volume to persist data across new Pods.
    by("Looking for a node to schedule job pod")
    node, err = get_random_ready_schedulable_node(f.core)
    expect_ok(err, "unexpected error")

    parallelism = 2
    completions = 4
    backoff_limit = 6  # default value
    by("Creating a job")
    job = new_test_job_on_node("failOnce", "pod-failure-failjob", "Never", parallelism,
                               completions, None, backoff_limit, node.metadata.name)
    # job.Spec.PodFailurePolicy (the installed client's V1JobSpec lacks it; see e2e_batch.py)
    set_extra_field(job, ["spec", "podFailurePolicy"], {
        "rules": [{
            "action": "FailJob",
            "onExitCodes": {"operator": "In", "values": [1]},
        }],
    })
    job = expect_no_error(create_job, f.api_client, ns, job,
                          explain="failed to create job in namespace: %s" % ns)

    by("Ensuring job fails")
    err = wait_for_job_failed(f.api_client, ns, job.metadata.name)
    expect_ok(err, "failed to ensure job failure in namespace: %s" % ns)


# Release: v1.32
# Testname: Ensure pod failure policy allows to ignore failure matching on the
# DisruptionTarget condition
# Description: This test is using an indexed job. The pod corresponding to each index
# creates a marker file on the host and runs 'forever' until evicted. Once the marker file
# is created the pod succeeds seeing it on restart. Thus, we trigger one failure per index
# due to eviction (DisruptionTarget condition is added in the process). The Job would be
# marked as failed, if not for the ignore rule matching on exit codes.
@conformance("[sig-apps] Job should allow to use a pod failure policy to ignore failure "
             "matching on DisruptionTarget condition [Conformance]")
# A healthy run takes well under conftest's 150 s; the limit is raised past the pod-deletion
# wait (f.Timeouts.PodDelete, 5 min) so that pods that never go away fail with upstream's
# own error instead of the harness's timeout.
@pytest.mark.test_timeout(POD_DELETE_TIMEOUT + 120)
def test_job_pod_failure_policy_ignore_disruption_target(new_framework):
    f = job_framework(new_framework)
    ns = f.namespace.metadata.name

    # We set the backoffLimit = numPods-1 so that we can tolerate random failures (like
    # OutOfPods from kubelet). Yet, the Job would fail if the pod failures were not be
    # ignored.
    num_pods = 3
    parallelism = num_pods
    completions = num_pods
    backoff_limit = num_pods - 1

    by("Looking for a node to schedule job pods")
    node, err = get_random_ready_schedulable_node(f.core)
    expect_ok(err, "unexpected error")

    by("Creating a job")
    job = new_test_job_on_node("notTerminateOncePerIndex",
                               "evicted-pod-ignore-on-disruption-condition", "Never",
                               parallelism, completions, None, backoff_limit,
                               node.metadata.name)
    job.spec.completion_mode = "Indexed"  # ptr.To(batchv1.IndexedCompletion)
    # job.Spec.PodFailurePolicy (the installed client's V1JobSpec lacks it; see e2e_batch.py)
    set_extra_field(job, ["spec", "podFailurePolicy"], {
        "rules": [{
            # Ignore the pod failure caused by the eviction based on the DisruptionTarget
            # condition
            "action": "Ignore",
            "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
        }],
    })
    job = expect_no_error(create_job, f.api_client, ns, job,
                          explain="failed to create job in namespace: %s" % ns)

    by("Waiting for all the pods to be ready")
    err = wait_for_job_ready(f.api_client, ns, job.metadata.name, num_pods)
    expect_ok(err, "failed to await for all pods to be ready for job: %s/%s" % (
        job.metadata.name, job.metadata.namespace))

    by("Fetch all running pods")
    pods = expect_no_error(get_all_running_job_pods, f.core, ns, job.metadata.name,
                           explain="failed to get running pods for the job: %s/%s" % (
                               job.metadata.name, job.metadata.namespace))
    assert len(pods) == num_pods, \
        "Number of running pods doesn't match parallelism\nExpected\n    %s\nto have " \
        "length %d" % ([p.metadata.name for p in pods], num_pods)

    by("Evict all the Pods")

    def evict(index):
        pod = pods[index]
        by("Evicting the running pod: %s/%s" % (pod.metadata.name, pod.metadata.namespace))
        # f.ClientSet.CoreV1().Pods(pod.Namespace).EvictV1(ctx, &policyv1.Eviction{...})
        evict_target = {"apiVersion": "policy/v1", "kind": "Eviction",
                        "metadata": {"name": pod.metadata.name,
                                     "namespace": pod.metadata.namespace}}
        expect_no_error(raw_call, f.api_client, "POST",
                        "/api/v1/namespaces/%s/pods/%s/eviction" % (pod.metadata.namespace,
                                                                     pod.metadata.name),
                        body=evict_target,
                        explain="failed to evict the pod: %s/%s" % (pod.metadata.name,
                                                                    pod.metadata.namespace))

        by("Awaiting for the pod: %s/%s to be deleted" % (pod.metadata.name,
                                                          pod.metadata.namespace))
        err = wait_for_pod_not_found(f.core, pod.metadata.name, pod.metadata.namespace,
                                     POD_DELETE_TIMEOUT)
        expect_ok(err, "failed to await for all pods to be deleted: %s/%s" % (
            pod.metadata.name, pod.metadata.namespace))

    parallelize_until(num_pods, num_pods, evict)

    by("Ensuring job reaches completions")
    err = wait_for_job_complete(f.api_client, ns, job.metadata.name,
                                JOB_REASON_COMPLETIONS_REACHED, completions)
    expect_ok(err, "failed to ensure job completion in namespace: %s" % ns)


# Release: v1.24
# Testname: Ensure Pods of an Indexed Job get a unique index.
# Description: Create an Indexed job. Job MUST complete successfully. Ensure that created
# pods have completion index annotation and environment variable.
@conformance("[sig-apps] Job should create pods for an Indexed job with completion indexes and "
             "specified hostname [Conformance]")
def test_job_indexed_completion_indexes_and_hostname(new_framework):
    f = job_framework(new_framework)
    ns = f.namespace.metadata.name
    parallelism = 2
    completions = 4
    backoff_limit = 6  # default value

    by("Creating Indexed job")
    job = new_test_job("succeed", "indexed-job", "Never", parallelism, completions, None,
                       backoff_limit)
    mode = "Indexed"  # batchv1.IndexedCompletion
    job.spec.completion_mode = mode
    job = expect_no_error(create_job, f.api_client, ns, job,
                          explain="failed to create indexed job in namespace %s" % ns)

    by("Ensuring job reaches completions")
    err = wait_for_job_complete(f.api_client, ns, job.metadata.name,
                                JOB_REASON_COMPLETIONS_REACHED, completions)
    expect_ok(err, "failed to ensure job completion in namespace: %s" % ns)

    by("Ensuring pods with index for job exist")
    pods = expect_no_error(get_job_pods, f.core, ns, job.metadata.name,
                           explain="failed to get pod list for job in namespace: %s" % ns)
    succeeded_indexes = set()
    for pod in pods.items:
        if pod.status.phase == "Succeeded" and pod.metadata.annotations is not None:
            ix, err = _atoi(pod.metadata.annotations.get(JOB_COMPLETION_INDEX_ANNOTATION))
            expect_ok(err, "failed obtaining completion index from pod in namespace: %s" % ns)
            succeeded_indexes.add(ix)
            expected_name = "%s-%d" % (job.metadata.name, ix)
            assert pod.spec.hostname == expected_name, \
                "expected completed pod with hostname %s, but got %s" % (expected_name,
                                                                         pod.spec.hostname)
    got_indexes = sorted(succeeded_indexes)
    want_indexes = [0, 1, 2, 3]
    assert got_indexes == want_indexes, \
        "expected completed indexes %s, but got %s" % (want_indexes, got_indexes)


# Release: v1.16
# Testname: Jobs, completion after task failure
# Description: Explicitly cause the tasks to fail once initially. After restarting, the Job
# MUST execute to completion.
@conformance("[sig-apps] Job should run a job to completion when tasks sometimes fail and are "
             "locally restarted [Conformance]")
def test_job_completion_with_local_restarts(new_framework):
    f = job_framework(new_framework)
    ns = f.namespace.metadata.name
    parallelism = 2
    completions = 4
    backoff_limit = 6  # default value

    by("Creating a job")
    # One failure, then a success, local restarts. We can't use the random failure
    # approach, because kubelet will throttle frequently failing containers in a given pod,
    # ramping up to 5 minutes between restarts, making test timeout due to successive
    # failures too likely with a reasonable test timeout.
    job = new_test_job("failOnce", "fail-once-local", "OnFailure", parallelism, completions,
                       None, backoff_limit)
    job = expect_no_error(create_job, f.api_client, ns, job,
                          explain="failed to create job in namespace: %s" % ns)

    by("Ensuring job reaches completions")
    err = wait_for_job_complete(f.api_client, ns, job.metadata.name,
                                JOB_REASON_COMPLETIONS_REACHED, completions)
    expect_ok(err, "failed to ensure job completion in namespace: %s" % ns)


# Release: v1.15
# Testname: Jobs, active pods, graceful termination
# Description: Create a job. Ensure the active pods reflect parallelism in the namespace and
# delete the job. Job MUST be deleted successfully.
@conformance("[sig-apps] Job should delete a job [Conformance]")
def test_job_delete(new_framework):
    f = job_framework(new_framework)
    ns = f.namespace.metadata.name
    parallelism = 2
    completions = 4
    backoff_limit = 6  # default value

    by("Creating a job")
    job = new_test_job("notTerminate", "foo", "Never", parallelism, completions, None,
                       backoff_limit)
    job = expect_no_error(create_job, f.api_client, ns, job,
                          explain="failed to create job in namespace: %s" % ns)

    by("Ensuring active pods == parallelism")
    err = wait_for_job_pods_running(f.core, ns, job.metadata.name, parallelism)
    expect_ok(err, "failed to ensure active pods == parallelism in namespace: %s" % ns)

    by("delete a job")
    expect_ok(delete_job_and_wait_for_gc(f.api_client, f.core, ns, job.metadata.name),
              "unexpected error")

    by("Ensuring job was deleted")
    try:
        get_job(f.api_client, ns, job.metadata.name)
    except ApiException as err:
        if not is_not_found(err):
            fail("failed to ensure job %s was deleted in namespace: %s: Expected an error "
                 "satisfying apierrors.IsNotFound, got %s", job.metadata.name, ns,
                 describe_error(err))
    else:
        fail("failed to ensure job %s was deleted in namespace: %s: Expected an error to have "
             "occurred.  Got: <nil>: nil", job.metadata.name, ns)


# Release: v1.16
# Testname: Jobs, orphan pods, re-adoption
# Description: Create a parallel job. The number of Pods MUST equal the level of
# parallelism. Orphan a Pod by modifying its owner reference. The Job MUST re-adopt the
# orphan pod. Modify the labels of one of the Job's Pods. The Job MUST release the Pod.
@conformance("[sig-apps] Job should adopt matching orphans and release non-matching pods "
             "[Conformance]")
def test_job_adopt_and_release_pods(new_framework):
    f = job_framework(new_framework)
    ns = f.namespace.metadata.name
    parallelism = 2
    completions = 4
    backoff_limit = 6  # default value

    by("Creating a job")
    job = new_test_job("notTerminate", "adopt-release", "Never", parallelism, completions,
                       None, backoff_limit)
    # Replace job with the one returned from Create() so it has the UID.
    # Save Kind since it won't be populated in the returned job.
    kind = job.kind
    job = expect_no_error(create_job, f.api_client, ns, job,
                          explain="failed to create job in namespace: %s" % ns)
    job.kind = kind

    by("Ensuring active pods == parallelism")
    err = wait_for_job_pods_running(f.core, ns, job.metadata.name, parallelism)
    expect_ok(err, "failed to ensure active pods == parallelism in namespace: %s" % ns)

    by("Orphaning one of the Job's Pods")
    pods = expect_no_error(get_job_pods, f.core, ns, job.metadata.name,
                           explain="failed to get PodList for job %s in namespace: %s" % (
                               job.metadata.name, ns))
    assert len(pods.items) == parallelism, \
        "Expected %d pods of job %s, got %d" % (parallelism, job.metadata.name, len(pods.items))
    pod = pods.items[0]

    def orphan(p):
        p.metadata.owner_references = None

    PodClient(f).update(pod.metadata.name, orphan)

    by("Checking that the Job readopts the Pod")

    def adopted(p):
        controller_ref = get_controller_of(p)
        if controller_ref is None:
            return False, None
        if (controller_ref.kind != job.kind or controller_ref.name != job.metadata.name or
                controller_ref.uid != job.metadata.uid):
            return False, "pod has wrong controllerRef: got %s, want %s" % (
                controller_ref.to_dict(), {"kind": job.kind, "name": job.metadata.name,
                                           "uid": job.metadata.uid})
        return True, None

    err = wait_for_pod_condition(f.core, pod.metadata.namespace, pod.metadata.name, "adopted",
                                 JOB_TIMEOUT, adopted)
    if err is not None:
        fail("wait for pod %r to be readopted: %s", pod.metadata.name, err)

    by("Removing the labels from the Job's Pod")

    def unlabel(p):
        p.metadata.labels = None

    PodClient(f).update(pod.metadata.name, unlabel)

    by("Checking that the Job releases the Pod")

    def released(p):
        controller_ref = get_controller_of(p)
        if controller_ref is not None:
            return False, None
        return True, None

    err = wait_for_pod_condition(f.core, pod.metadata.namespace, pod.metadata.name, "released",
                                 JOB_TIMEOUT, released)
    if err is not None:
        fail("wait for pod %r to be released: %s", pod.metadata.name, err)


# Release: v1.24
# Testname: Jobs, apply changes to status
# Description: Attempt to create a running Job which MUST succeed. Attempt to patch the Job
# status which MUST succeed. An annotation for the job that was patched MUST be found.
# Attempt to replace the job status with update which MUST succeed. Attempt to read its
# status sub-resource which MUST succeed
@conformance("[sig-apps] Job should apply changes to a job status [Conformance]")
def test_job_apply_changes_to_status(new_framework):
    f = job_framework(new_framework)
    ns = f.namespace.metadata.name
    j_client = JobClient(f.api_client, ns)

    parallelism = 2
    completions = 4
    backoff_limit = 6  # default value

    by("Creating a job")
    job = new_test_job("notTerminate", "suspend-false-to-true", "Never", parallelism,
                       completions, None, backoff_limit)
    job = expect_no_error(create_job, f.api_client, ns, job,
                          explain="failed to create job in namespace: %s" % ns)

    by("Ensure pods equal to parallelism count is attached to the job")
    err = wait_for_job_pods_running(f.core, ns, job.metadata.name, parallelism)
    expect_ok(err, "failed to ensure number of pods associated with job %s is equal to "
                   "parallelism count in namespace: %s" % (job.metadata.name, ns))

    custom_condition_type = "CustomConditionType"
    # /status subresource operations
    by("patching /status")
    # we need to use RFC3339 version since conversion over the wire cuts nanoseconds
    now1 = rfc3339_now()
    # json.Marshal(batchv1.JobStatus{Conditions: [{Type, Status: True, LastTransitionTime}]})
    # (lastProbeTime is a zero metav1.Time: null)
    j_status_json = json.dumps({"conditions": [{
        "type": custom_condition_type,
        "status": "True",
        "lastProbeTime": None,
        "lastTransitionTime": go_time(now1, False),
    }]}, separators=(",", ":"))
    patched_status = expect_no_error(
        j_client.patch, job.metadata.name, "application/merge-patch+json",
        '{"metadata":{"annotations":{"patchedstatus":"true"}},"status":' + j_status_json + '}',
        "status")
    condition = find_condition_by_type(patched_status.status.conditions, custom_condition_type)
    if condition is not None:
        if condition.last_transition_time != now1:
            fail("patched object should have the applied condition with LastTransitionTime "
                 "%s, got %s instead", now1, condition.last_transition_time)
    else:
        fail("patched object does not have the required condition %s", custom_condition_type)
    assert (patched_status.metadata.annotations or {}).get("patchedstatus") == "true", \
        "patched object should have the applied annotation: %s" % \
        patched_status.metadata.annotations

    by("updating /status")
    # we need to use RFC3339 version since conversion over the wire cuts nanoseconds
    now2 = rfc3339_now()
    updated = []

    def update():
        status_to_update = j_client.get(job.metadata.name)
        cond = find_condition_by_type(
            status_to_update.status.conditions if status_to_update.status else None,
            custom_condition_type)
        if cond is not None:
            cond.last_transition_time = now2
        else:
            fail("patched object does not have the required condition %s",
                 custom_condition_type)
        updated.append(j_client.update_status(status_to_update))

    expect_no_error(retry_on_conflict, update, explain="unexpected error")
    updated_status = updated[-1]
    condition = find_condition_by_type(updated_status.status.conditions, custom_condition_type)
    if condition is not None:
        if condition.last_transition_time != now2:
            fail("patched object should have the applied condition with LastTransitionTime "
                 "%s, got %s instead", now2, condition.last_transition_time)
    else:
        fail("patched object does not have the required condition %s", custom_condition_type)

    by("get /status")
    # f.DynamicClient.Resource(jobs).Namespace(ns).Get(ctx, job.Name, {}, "status")
    gotten_status = expect_no_error(
        raw_call, f.api_client, "GET",
        "/apis/batch/v1/namespaces/%s/jobs/%s/status" % (ns, job.metadata.name),
        explain="unexpected error")
    status_uid = (gotten_status.get("metadata") or {}).get("uid")
    assert job.metadata.uid == status_uid, \
        "job.UID: %s expected to match statusUID: %s " % (job.metadata.uid, status_uid)


# Release: v1.25
# Testname: Jobs, manage lifecycle
# Description: Attempt to create a suspended Job which MUST succeed. Attempt to patch the Job
# to include a new label which MUST succeed. The label MUST be found. Attempt to replace the
# Job to include a new annotation which MUST succeed. The annotation MUST be found. Attempt
# to list all namespaces with a label selector which MUST succeed. One list MUST be found.
# It MUST succeed at deleting a collection of jobs via a label selector.
@conformance("[sig-apps] Job should manage the lifecycle of a job [Conformance]")
def test_job_manage_lifecycle(new_framework):
    f = job_framework(new_framework)
    job_name = "e2e-" + rand_string(5)
    label = {"e2e-job-label": job_name}
    label_selector = selector_from_set(label)

    ns = f.namespace.metadata.name
    job_client = JobClient(f.api_client, ns)
    batch = client.BatchV1Api(f.api_client)

    # cache.ListWatch{WatchFunc: jobClient.Watch with the label selector}
    w = (batch.list_namespaced_job, (ns,), {"label_selector": label_selector})
    jobs_list = expect_no_error(job_client.list, label_selector, explain="failed to list Job")

    parallelism = 2
    completions = 4
    backoff_limit = 6  # default value

    by("Creating a suspended job")
    job = new_test_job("succeed", job_name, "Never", parallelism, completions, None,
                       backoff_limit)
    job.metadata.labels = label
    job.spec.suspend = True
    job = expect_no_error(create_job, f.api_client, ns, job,
                          explain="failed to create job in namespace: %s" % ns)

    by("Patching the Job")
    payload = "{\"metadata\":{\"labels\":{\"" + job_name + "\":\"patched\"}}}"
    patched_job = expect_no_error(job_client.patch, job_name,
                                  "application/strategic-merge-patch+json", payload,
                                  explain="failed to patch Job %s in namespace %s" % (job_name,
                                                                                      ns))

    by("Watching for Job to be patched")
    c = WatchEventConfig(
        framework=f,
        resource_version=jobs_list.metadata.resource_version,
        w=w,
        job_name=job_name,
        watch_event="MODIFIED",
        ext_job=patched_job,
        updated_metadata_type="label",
        updated_key=job_name,
        updated_value="patched",
    )
    wait_for_job_event(c)
    assert (patched_job.metadata.labels or {}).get(job_name) == "patched", \
        "Did not find job label for this job. Current labels: %s" % patched_job.metadata.labels

    by("Updating the job")
    updated = []

    def update():
        nonlocal patched_job
        patched_job = expect_no_error(job_client.get, job_name,
                                      explain="Unable to get job %s" % job_name)
        patched_job.spec.suspend = False
        if patched_job.metadata.annotations is None:
            patched_job.metadata.annotations = {}
        patched_job.metadata.annotations["updated"] = "true"
        updated.append(update_job(f.api_client, ns, patched_job))

    expect_no_error(retry_on_conflict, update,
                    explain="failed to update job in namespace: %s" % ns)
    updated_job = updated[-1]

    by("Watching for Job to be updated")
    c = WatchEventConfig(
        framework=f,
        resource_version=patched_job.metadata.resource_version,
        w=w,
        job_name=job_name,
        watch_event="MODIFIED",
        ext_job=updated_job,
        updated_metadata_type="annotation",
        updated_key="updated",
        updated_value="true",
    )
    wait_for_job_event(c)
    assert (updated_job.metadata.annotations or {}).get("updated") == "true", \
        "updated Job should have the applied annotation: %s" % updated_job.metadata.annotations
    logf("Found Job annotations: %s", patched_job.metadata.annotations)

    by("Listing all Jobs with LabelSelector")
    jobs = expect_no_error(JobClient(f.api_client, "").list, label_selector,
                           explain="Failed to list job.")
    assert len(jobs.items) == 1, "Failed to find job %s: got %d items" % (job_name,
                                                                          len(jobs.items))
    test_job = jobs.items[0]
    logf("Job: %s as labels: %s", test_job.metadata.name, test_job.metadata.labels)

    by("Waiting for job to complete")
    err = wait_for_job_complete(f.api_client, ns, job_name, JOB_REASON_COMPLETIONS_REACHED,
                                completions)
    expect_ok(err, "failed to ensure job completion in namespace: %s" % ns)

    by("Delete a job collection with a labelselector")
    propagation_policy = "Background"  # metav1.DeletePropagationBackground
    expect_no_error(job_client.delete_collection, propagation_policy, label_selector,
                    explain="failed to delete job %s in namespace: %s" % (job.metadata.name,
                                                                          ns))

    by("Watching for Job to be deleted")
    c = WatchEventConfig(
        framework=f,
        resource_version=updated_job.metadata.resource_version,
        w=w,
        job_name=job_name,
        watch_event="DELETED",
        ext_job=test_job,
        updated_metadata_type="label",
        updated_key="e2e-job-label",
        updated_value=job_name,
    )
    wait_for_job_event(c)

    by("Relist jobs to confirm deletion")
    jobs = expect_no_error(JobClient(f.api_client, "").list, label_selector,
                           explain="Failed to list job.")
    assert len(jobs.items) == 0, "Found job %s: %s" % (
        job_name, [j.metadata.name for j in jobs.items])
