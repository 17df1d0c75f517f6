"""Ports of the CronJob [Conformance] tests of test/e2e/apps/cronjob.go
(kubernetes/kubernetes, v1.32): "should schedule multiple jobs concurrently", "should not
schedule jobs when suspended [Slow]", "should not schedule new jobs when ForbidConcurrent
[Slow]", "should replace jobs when ReplaceConcurrent" and "should support CronJob API
operations", with the file's helpers (newTestCronJob, waitForActiveJobs,
waitForJobReplaced, filterActiveJobs, ...). The client for batch/v1 and the gomega and
budget helpers are in e2e_batch.py.

They need shepherd-controller-manager's CronJob and Job controllers and garbage collector,
the scheduler and the two nodes (conftest.py): the Jobs' pods run for real.

Image substitution (the nodes never pull): newTestCronJob's container image
imageutils.BusyBox (registry.k8s.io/e2e-test-images/busybox:1.36.1-1) becomes the nodes'
offline busybox 1.36 (BUSYBOX_IMAGE, docker.io/library/busybox:1.36), which has upstream's
commands (sleep, /bin/true).

Timings are upstream's: the schedules are "*/1 * * * ?", so a Job starts only at a minute
boundary, and the waits allow cronJobTimeout (5 minutes) each. conftest.py's per-test limit
(150 s unless SHEPHERD_CONFORMANCE_TEST_TIMEOUT says otherwise) is shorter than that, so
each such test's test_timeout marker raises it to the sum of its upstream waits.
"""

import datetime
import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_batch import (FOREVER_TEST_TIMEOUT, CronJobClient, JobClient, consistently, eventually,
                       get_object, is_job_finished, open_watch)
from e2e_framework import (BUSYBOX_IMAGE, CONTEXT_DEADLINE, POLL, WatchClosed, by, conformance,
                           describe_error, expect_no_error, fail, go_time, is_not_found, logf,
                           poll, raw_call, retry_on_conflict)

# How long to wait for a cronjob
CRON_JOB_TIMEOUT = 5 * 60  # cronJobTimeout

SLEEP_COMMAND = ["sleep", "300"]
# Pod will complete instantly
SUCCESS_COMMAND = ["/bin/true"]
FAILURE_COMMAND = ["/bin/false"]


def cronjob_framework(new_framework):
    """SIGDescribe("CronJob"): NewDefaultFramework("cronjob"), NamespacePodSecurityLevel
    baseline."""
    return new_framework("cronjob", "baseline")


def expect_ok(err, explain):
    """framework.ExpectNoError(err, explain) for the helpers' error texts."""
    if err is not None:
        fail("%s: %s", explain, err)


def rfc3339_now():
    """metav1.Now().Rfc3339Copy(): now, to the second."""
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)


def new_test_cron_job(name, schedule, concurrency_policy, command,
                      successful_jobs_history_limit, failed_jobs_history_limit):
    """newTestCronJob: parallelism, completions and backoffLimit 1, restartPolicy OnFailure,
    an emptyDir "data" at /data, container "c" running ``command`` in busybox (see the module
    doc)."""
    parallelism = 1
    completions = 1
    backofflimit = 1
    sj = client.V1CronJob(
        kind="CronJob",
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1CronJobSpec(
            schedule=schedule,
            concurrency_policy=concurrency_policy,
            job_template=client.V1JobTemplateSpec(
                spec=client.V1JobSpec(
                    parallelism=parallelism,
                    completions=completions,
                    backoff_limit=backofflimit,
                    template=client.V1PodTemplateSpec(
                        spec=client.V1PodSpec(
                            restart_policy="OnFailure",
                            volumes=[client.V1Volume(
                                name="data", empty_dir=client.V1EmptyDirVolumeSource())],
                            containers=[client.V1Container(
                                name="c",
                                image=BUSYBOX_IMAGE,
                                volume_mounts=[client.V1VolumeMount(mount_path="/data",
                                                                    name="data")],
                            )],
                        ),
                    ),
                ),
            ),
        ),
    )
    sj.spec.successful_jobs_history_limit = successful_jobs_history_limit
    sj.spec.failed_jobs_history_limit = failed_jobs_history_limit
    if command is not None:
        sj.spec.job_template.spec.template.spec.containers[0].command = command
    return sj


def create_cron_job(api_client, ns, cron_job):
    """createCronJob (raises ApiException)."""
    return CronJobClient(api_client, ns).create(cron_job)


def get_cron_job(api_client, ns, name):
    """getCronJob (raises ApiException)."""
    return CronJobClient(api_client, ns).get(name)


def delete_cron_job(api_client, ns, name):
    """deleteCronJob: propagationPolicy Background (also deletes the jobs and their pods)."""
    return CronJobClient(api_client, ns).delete(name, propagation_policy="Background")


def _active(cron_job):
    return (cron_job.status.active if cron_job.status is not None else None) or []


def _poll_until_context_timeout(condition, timeout):
    """wait.PollUntilContextTimeout(ctx, framework.Poll, timeout, false, condition): an API
    error ends the poll."""

    def wrapped():
        try:
            return condition()
        except ApiException as err:
            return False, describe_error(err)

    return poll(POLL, timeout, wrapped, immediate=False, timeout_error=CONTEXT_DEADLINE)


def wait_for_active_jobs(api_client, ns, cron_job_name, active):
    """waitForActiveJobs: at least ``active`` entries in status.active."""

    def condition():
        curr = get_cron_job(api_client, ns, cron_job_name)
        return len(_active(curr)) >= active, None

    return _poll_until_context_timeout(condition, CRON_JOB_TIMEOUT)


def wait_for_job_replaced(api_client, ns, previous_job_name):
    """waitForJobReplaced: exactly one Job not pending deletion, named differently."""

    def condition():
        jobs = JobClient(api_client, ns).list()
        # Ignore Jobs pending deletion, since deletion of Jobs is now asynchronous.
        alive_jobs = filter_not_deleted_jobs(jobs)
        if len(alive_jobs) > 1:
            return False, "more than one job is running %s" % json.dumps(
                [j._raw for j in jobs.items])
        elif len(alive_jobs) == 0:
            logf("Warning: Found 0 jobs in namespace %s", ns)
            return False, None
        return alive_jobs[0].metadata.name != previous_job_name, None

    return _poll_until_context_timeout(condition, CRON_JOB_TIMEOUT)


def filter_not_deleted_jobs(jobs):
    """filterNotDeletedJobs"""
    return [j for j in jobs.items if j.metadata.deletion_timestamp is None]


def filter_active_jobs(jobs):
    """filterActiveJobs: (active, finished) by jobutil.IsJobFinished."""
    active, finished = [], []
    for j in jobs.items:
        if not is_job_finished(j):
            active.append(j)
        else:
            finished.append(j)
    return active, finished


def _job_names(jobs):
    return [j.metadata.name for j in jobs]


# Release: v1.21
# Testname: CronJob AllowConcurrent
# Description: CronJob MUST support AllowConcurrent policy, allowing to run multiple jobs at
# the same time.
@conformance("[sig-apps] CronJob should schedule multiple jobs concurrently [Conformance]")
@pytest.mark.test_timeout(CRON_JOB_TIMEOUT + 60)
def test_cronjob_allow_concurrent(new_framework):
    f = cronjob_framework(new_framework)
    ns = f.namespace.metadata.name

    by("Creating a cronjob")
    cron_job = new_test_cron_job("concurrent", "*/1 * * * ?", "Allow", SLEEP_COMMAND, None,
                                 None)
    cron_job = expect_no_error(create_cron_job, f.api_client, ns, cron_job,
                               explain="Failed to create CronJob in namespace %s" % ns)

    by("Ensuring more than one job is running at a time")
    err = wait_for_active_jobs(f.api_client, ns, cron_job.metadata.name, 2)
    expect_ok(err, "Failed to wait for active jobs in CronJob %s in namespace %s" % (
        cron_job.metadata.name, ns))

    by("Ensuring at least two running jobs exists by listing jobs explicitly")
    jobs = expect_no_error(JobClient(f.api_client, ns).list,
                           explain="Failed to list jobs in namespace %s" % ns)
    active_jobs, _ = filter_active_jobs(jobs)
    assert len(active_jobs) >= 2, \
        "Expected at least 2 active jobs, got %d: %s" % (len(active_jobs),
                                                        _job_names(active_jobs))

    by("Removing cronjob")
    expect_no_error(delete_cron_job, f.api_client, ns, cron_job.metadata.name,
                    explain="Failed to delete CronJob %s in namespace %s" % (
                        cron_job.metadata.name, ns))


# Release: v1.21
# Testname: CronJob Suspend
# Description: CronJob MUST support suspension, which suppresses creation of new jobs.
@conformance("[sig-apps] CronJob should not schedule jobs when suspended [Slow] [Conformance]")
@pytest.mark.test_timeout(CRON_JOB_TIMEOUT + 60)
def test_cronjob_suspended(new_framework):
    f = cronjob_framework(new_framework)
    ns = f.namespace.metadata.name

    by("Creating a suspended cronjob")
    cron_job = new_test_cron_job("suspended", "*/1 * * * ?", "Allow", SLEEP_COMMAND, None,
                                 None)
    t = True
    cron_job.spec.suspend = t
    cron_job = expect_no_error(create_cron_job, f.api_client, ns, cron_job,
                               explain="Failed to create CronJob in namespace %s" % ns)

    by("Ensuring no jobs are scheduled")

    def status_active_empty(cj):
        if not _active(cj):
            return None
        return "Expected\n%s\nto have field Status.Active empty" % json.dumps(
            cj._raw.get("status"))

    err = consistently(get_object(CronJobClient(f.api_client, ns).get, cron_job.metadata.name),
                       status_active_empty, CRON_JOB_TIMEOUT, POLL)
    if err is not None:
        fail("%s", err)

    by("Ensuring no job exists by listing jobs explicitly")
    jobs = expect_no_error(JobClient(f.api_client, ns).list,
                           explain="Failed to list jobs in namespace %s" % ns)
    assert len(jobs.items) == 0, "Expected no jobs, got %s" % _job_names(jobs.items)

    by("Removing cronjob")
    expect_no_error(delete_cron_job, f.api_client, ns, cron_job.metadata.name,
                    explain="Failed to delete CronJob %s in namespace %s" % (
                        cron_job.metadata.name, ns))


# Release: v1.21
# Testname: CronJob ForbidConcurrent
# Description: CronJob MUST support ForbidConcurrent policy, allowing to run single,
# previous job at the time.
@conformance("[sig-apps] CronJob should not schedule new jobs when ForbidConcurrent [Slow] "
             "[Conformance]")
@pytest.mark.test_timeout(2 * CRON_JOB_TIMEOUT + 60)
def test_cronjob_forbid_concurrent(new_framework):
    f = cronjob_framework(new_framework)
    ns = f.namespace.metadata.name

    by("Creating a ForbidConcurrent cronjob")
    cron_job = new_test_cron_job("forbid", "*/1 * * * ?", "Forbid", SLEEP_COMMAND, None, None)
    cron_job = expect_no_error(create_cron_job, f.api_client, ns, cron_job,
                               explain="Failed to create CronJob in namespace %s" % ns)

    by("Ensuring a job is scheduled")
    err = wait_for_active_jobs(f.api_client, ns, cron_job.metadata.name, 1)
    expect_ok(err, "Failed to schedule CronJob %s" % cron_job.metadata.name)

    by("Ensuring exactly one is scheduled")
    cron_job = expect_no_error(get_cron_job, f.api_client, ns, cron_job.metadata.name,
                               explain="Failed to get CronJob %s" % cron_job.metadata.name)
    assert len(_active(cron_job)) == 1, \
        "Expected status.active to have 1 entry, got %s" % json.dumps(
            cron_job._raw.get("status"))

    by("Ensuring exactly one running job exists by listing jobs explicitly")
    jobs = expect_no_error(JobClient(f.api_client, ns).list,
                           explain="Failed to list jobs in namespace %s" % ns)
    active_jobs, _ = filter_active_jobs(jobs)
    assert len(active_jobs) == 1, \
        "Expected 1 active job, got %d: %s" % (len(active_jobs), _job_names(active_jobs))

    by("Ensuring no more jobs are scheduled")

    def fewer_than_two_active(cj):
        if len(_active(cj)) < 2:
            return None
        return "unexpected active job number: %d\n" % len(_active(cj))

    err = eventually(get_object(CronJobClient(f.api_client, ns).get, cron_job.metadata.name),
                     fewer_than_two_active, CRON_JOB_TIMEOUT, POLL)
    if err is not None:
        fail("%s", err)

    by("Removing cronjob")
    expect_no_error(delete_cron_job, f.api_client, ns, cron_job.metadata.name,
                    explain="Failed to delete CronJob %s in namespace %s" % (
                        cron_job.metadata.name, ns))


# Release: v1.21
# Testname: CronJob ReplaceConcurrent
# Description: CronJob MUST support ReplaceConcurrent policy, allowing to run single, newer
# job at the time.
@conformance("[sig-apps] CronJob should replace jobs when ReplaceConcurrent [Conformance]")
@pytest.mark.test_timeout(2 * CRON_JOB_TIMEOUT + 60)
def test_cronjob_replace_concurrent(new_framework):
    f = cronjob_framework(new_framework)
    ns = f.namespace.metadata.name

    by("Creating a ReplaceConcurrent cronjob")
    cron_job = new_test_cron_job("replace", "*/1 * * * ?", "Replace", SLEEP_COMMAND, None,
                                 None)
    cron_job = expect_no_error(create_cron_job, f.api_client, ns, cron_job,
                               explain="Failed to create CronJob in namespace %s" % ns)

    by("Ensuring a job is scheduled")
    err = wait_for_active_jobs(f.api_client, ns, cron_job.metadata.name, 1)
    expect_ok(err, "Failed to schedule CronJob %s in namespace %s" % (cron_job.metadata.name,
                                                                     ns))

    by("Ensuring exactly one is scheduled")
    cron_job = expect_no_error(get_cron_job, f.api_client, ns, cron_job.metadata.name,
                               explain="Failed to get CronJob %s" % cron_job.metadata.name)
    assert len(_active(cron_job)) == 1, \
        "Expected status.active to have 1 entry, got %s" % json.dumps(
            cron_job._raw.get("status"))

    by("Ensuring exactly one running job exists by listing jobs explicitly")
    jobs = expect_no_error(JobClient(f.api_client, ns).list,
                           explain="Failed to list the jobs in namespace %s" % ns)
    active_jobs, _ = filter_active_jobs(jobs)
    assert len(active_jobs) == 1, \
        "Expected 1 active job, got %d: %s" % (len(active_jobs), _job_names(active_jobs))

    by("Ensuring the job is replaced with a new one")
    err = wait_for_job_replaced(f.api_client, ns, jobs.items[0].metadata.name)
    expect_ok(err, "Failed to replace CronJob %s in namespace %s" % (
        jobs.items[0].metadata.name, ns))

    by("Removing cronjob")
    expect_no_error(delete_cron_job, f.api_client, ns, cron_job.metadata.name,
                    explain="Failed to delete CronJob %s in namespace %s" % (
                        cron_job.metadata.name, ns))


# Release: v1.21
# Testname: CronJob API Operations
# Description: CronJob MUST support create, get, list, watch, update, patch, delete, and
# deletecollection. CronJob/status MUST support get, update and patch.
@conformance("[sig-apps] CronJob should support CronJob API operations [Conformance]")
def test_cronjob_api_operations(new_framework):
    f = cronjob_framework(new_framework)
    batch = client.BatchV1Api(f.api_client)

    by("Creating a cronjob")
    success_limit = 1
    failed_limit = 0
    cj_template = new_test_cron_job("test-api", "* */1 * * ?", "Allow", SUCCESS_COMMAND,
                                    success_limit, failed_limit)
    cj_template.metadata.labels = {
        "special-label": f.unique_name,
    }

    ns = f.namespace.metadata.name
    cj_version = "v1"
    cj_client = CronJobClient(f.api_client, ns)

    by("creating")
    created_cron_job = expect_no_error(cj_client.create, cj_template, explain="unexpected error")

    by("getting")
    gotten_cron_job = expect_no_error(cj_client.get, created_cron_job.metadata.name,
                                      explain="unexpected error")
    assert gotten_cron_job.metadata.uid == created_cron_job.metadata.uid, \
        "Expected UID %s, got %s" % (created_cron_job.metadata.uid, gotten_cron_job.metadata.uid)

    by("listing")
    cjs = expect_no_error(cj_client.list, "special-label=" + f.unique_name,
                          explain="unexpected error")
    assert len(cjs.items) == 1, "filtered list should have 1 item, got %d" % len(cjs.items)

    by("watching")
    logf("starting watch")
    cj_watch = open_watch(batch.list_namespaced_cron_job, ns,
                          resource_version=cjs.metadata.resource_version,
                          label_selector="special-label=" + f.unique_name)
    try:
        # Test cluster-wide list and watch
        cluster_cj_client = CronJobClient(f.api_client, "")
        by("cluster-wide listing")
        cluster_cjs = expect_no_error(cluster_cj_client.list, "special-label=" + f.unique_name,
                                      explain="unexpected error")
        assert len(cluster_cjs.items) == 1, \
            "filtered list should have 1 item, got %d" % len(cluster_cjs.items)

        by("cluster-wide watching")
        logf("starting watch")
        # (upstream discards this watch; it ends with the test's context)
        cluster_watch = open_watch(batch.list_cron_job_for_all_namespaces,
                                   resource_version=cjs.metadata.resource_version,
                                   label_selector="special-label=" + f.unique_name)
        try:
            _api_operations_rest(f, ns, cj_version, cj_client, cj_template, created_cron_job,
                                 cj_watch)
        finally:
            cluster_watch.stop()
    finally:
        cj_watch.stop()


def _api_operations_rest(f, ns, cj_version, cj_client, cj_template, created_cron_job,
                         cj_watch):
    by("patching")
    patched_cron_job = expect_no_error(
        cj_client.patch, created_cron_job.metadata.name, "application/merge-patch+json",
        '{"metadata":{"annotations":{"patched":"true"}}}', explain="unexpected error")
    assert (patched_cron_job.metadata.annotations or {}).get("patched") == "true", \
        "patched object should have the applied annotation: %s" % \
        patched_cron_job.metadata.annotations

    by("updating")
    updated = []

    def update():
        cj_to_update = cj_client.get(created_cron_job.metadata.name)
        # (a nil map in Go would panic here; the patch above made it non-nil)
        cj_to_update.metadata.annotations["updated"] = "true"
        updated.append(cj_client.update(cj_to_update))

    expect_no_error(retry_on_conflict, update, explain="unexpected error")
    updated_cron_job = updated[-1]
    assert (updated_cron_job.metadata.annotations or {}).get("updated") == "true", \
        "updated object should have the applied annotation: %s" % \
        updated_cron_job.metadata.annotations

    logf("waiting for watch events with expected annotations")
    saw_annotations = False
    while not saw_annotations:
        try:
            evt = cj_watch.next(FOREVER_TEST_TIMEOUT)
        except WatchClosed:
            fail("Watch channel is closed.")
        if evt is None:
            fail("timed out waiting for watch event")
        assert evt["type"] == "MODIFIED", \
            "Expected watch event type MODIFIED, got %s: %r" % (evt["type"],
                                                                evt.get("raw_object"))
        watched_cron_job = evt["object"]
        if not isinstance(watched_cron_job, client.V1CronJob):
            fail("expected CronJob, got %s", type(watched_cron_job).__name__)
        if (watched_cron_job.metadata.annotations or {}).get("patched") == "true":
            logf("saw patched and updated annotations")
            saw_annotations = True
            cj_watch.stop()
        else:
            logf("missing expected annotations, waiting: %s",
                 watched_cron_job.metadata.annotations)

    # /status subresource operations
    by("patching /status")
    # we need to use RFC3339 version since conversion over the wire cuts nanoseconds
    now1 = rfc3339_now()
    # json.Marshal(batchv1.CronJobStatus{LastScheduleTime: &now1})
    cj_status_json = json.dumps({"lastScheduleTime": go_time(now1, False)},
                                separators=(",", ":"))
    patched_status = expect_no_error(
        cj_client.patch, created_cron_job.metadata.name, "application/merge-patch+json",
        '{"metadata":{"annotations":{"patchedstatus":"true"}},"status":' + cj_status_json + '}',
        "status", explain="unexpected error")
    last = patched_status.status.last_schedule_time if patched_status.status else None
    if last != now1:
        fail("patched object should have the applied lastScheduleTime %s, got %s instead",
             now1, last)
    assert (patched_status.metadata.annotations or {}).get("patchedstatus") == "true", \
        "patched object should have the applied annotation: %s" % \
        patched_status.metadata.annotations

    by("updating /status")
    # we need to use RFC3339 version since conversion over the wire cuts nanoseconds
    now2 = rfc3339_now()
    status_to_update = []
    updated_status = []

    def update_status():
        cj = cj_client.get(created_cron_job.metadata.name)
        status_to_update.append(cj)
        if cj.status is None:
            cj.status = client.V1CronJobStatus()
        cj.status.last_schedule_time = now2
        updated_status.append(cj_client.update_status(cj))

    expect_no_error(retry_on_conflict, update_status, explain="unexpected error")
    last = updated_status[-1].status.last_schedule_time if updated_status[-1].status else None
    if last != now2:
        fail("updated object status expected to have updated lastScheduleTime %s, got %s",
             status_to_update[-1].status.last_schedule_time, last)

    by("get /status")
    # f.DynamicClient.Resource(cronjobs).Namespace(ns).Get(ctx, name, {}, "status")
    gotten_status = expect_no_error(
        raw_call, f.api_client, "GET",
        "/apis/batch/%s/namespaces/%s/cronjobs/%s/status" % (cj_version, ns,
                                                             created_cron_job.metadata.name),
        explain="unexpected error")
    status_uid = (gotten_status.get("metadata") or {}).get("uid")
    assert created_cron_job.metadata.uid == status_uid, \
        "createdCronJob.UID: %s expected to match statusUID: %s " % (
            created_cron_job.metadata.uid, status_uid)

    # CronJob resource delete operations
    def expect_finalizer(cj, msg):
        assert cj.metadata.deletion_timestamp is not None, \
            "expected deletionTimestamp, got nil on step: %r, cronjob: %s" % (
                msg, json.dumps(cj._raw))
        assert cj.metadata.finalizers, \
            "expected finalizers on cronjob, got none on step: %r, cronjob: %s" % (
                msg, json.dumps(cj._raw))

    by("deleting")
    cj_template.metadata.name = "for-removal"
    for_removal_cron_job = expect_no_error(cj_client.create, cj_template,
                                           explain="unexpected error")
    expect_no_error(cj_client.delete, for_removal_cron_job.metadata.name,
                    explain="unexpected error")
    try:
        cj = cj_client.get(for_removal_cron_job.metadata.name)
    except ApiException as err:
        # If controller does not support finalizers, we expect a 404.  Otherwise we validate
        # finalizer behavior.
        if not is_not_found(err):
            fail("expected 404, got %s", describe_error(err))
    else:
        expect_finalizer(cj, "deleting cronjob")

    by("deleting a collection")
    expect_no_error(cj_client.delete_collection, None, "special-label=" + f.unique_name,
                    explain="unexpected error")
    cjs = expect_no_error(cj_client.list, "special-label=" + f.unique_name,
                          explain="unexpected error")
    # Should have <= 2 items since some cronjobs might not have been deleted yet due to
    # finalizers
    assert len(cjs.items) <= 2, "filtered list length should be <= 2, got:\n%s" % json.dumps(
        [c._raw for c in cjs.items], indent=1)
    # Validate finalizers
    for cj in cjs.items:
        expect_finalizer(cj, "deleting cronjob collection")
