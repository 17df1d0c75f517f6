"""Port of the ReplicationController [Conformance] test "should surface a failure condition
on a common issue like exceeded quota" of test/e2e/apps/rc.go (kubernetes/kubernetes v1.32),
SIGDescribe("ReplicationController") with NewDefaultFramework("replication-controller") and
NamespacePodSecurityLevel baseline: testReplicationControllerConditionCheck. (The other RC
tests of rc.go are in test_replication_controller.py.)

It reuses e2e_rc.py's newRC and updateReplicationControllerWithRetries, and e2e_quota.py's
newPodQuota (test/e2e/apps/replica_set.go) and resource.Quantity comparison.

It needs shepherd-apiserver's ResourceQuota with the quota admission plugin,
shepherd-controller-manager's resource quota controller (status.hard) and replication
manager (the ReplicaFailure condition when a pod create is refused, observedGeneration), the
scheduler and the two nodes (conftest.py): the two pods the quota admits run for real.

Image substitution: WebserverImage (imageutils.Httpd, a web server that runs until it is
stopped) becomes AGNHOST_IMAGE (agnhost-lite, whose default command `pause` runs until it is
stopped), as in test_replication_controller.py; the container name stays upstream's
WebserverImageName "httpd".

The test's pytest time limit (test_timeout) is the sum of upstream's four 1-minute polls, so
a failing poll reports upstream's error instead of the harness's default 150 s abort.
"""

import pytest
from kubernetes.client.rest import ApiException

from e2e_framework import (AGNHOST_IMAGE, CONTEXT_DEADLINE, by, conformance, describe_error,
                           expect_no_error, fail, logf, poll)
from e2e_quota import RESOURCE_PODS, must_parse, new_pod_quota, resource_list_get
from e2e_rc import new_rc, update_replication_controller_with_retries

WEBSERVER_IMAGE_NAME = "httpd"   # WebserverImageName
WEBSERVER_IMAGE = AGNHOST_IMAGE  # WebserverImage (imageutils.Httpd), see the module doc

RC_REPLICA_FAILURE = "ReplicaFailure"  # v1.ReplicationControllerReplicaFailure


def rc_framework(new_framework):
    """SIGDescribe("ReplicationController"): NewDefaultFramework("replication-controller"),
    NamespacePodSecurityLevel baseline."""
    return new_framework("replication-controller", "baseline")


def get_condition(status, cond_type):
    """replication.GetCondition(rc.Status, condType): the condition or None."""
    for c in (status.conditions if status is not None else None) or []:
        if c.type == cond_type:
            return c
    return None


def _conditions_repr(conditions):
    """%#v of the conditions, for the failure messages."""
    return [c.to_dict() for c in conditions or []]


def _observed_generation(rc):
    return (rc.status.observed_generation if rc.status is not None else None) or 0


# Release: v1.15
# Testname: Replication Controller, check for issues like exceeding allocated quota
# Description: Attempt to create a Replication Controller with pods exceeding the namespace
# quota. The creation MUST fail
@pytest.mark.test_timeout(4 * 60 + 30)  # four 1-minute polls
@conformance("[sig-apps] ReplicationController should surface a failure condition on a common "
             "issue like exceeded quota [Conformance]")
def test_rc_surface_failure_condition_exceeded_quota(new_framework):
    """testReplicationControllerConditionCheck:
    1. Create a quota restricting pods in the current namespace to 2.
    2. Create a replication controller that wants to run 3 pods.
    3. Check replication controller conditions for a ReplicaFailure condition.
    4. Relax quota or scale down the controller and observe the condition is gone."""
    f = rc_framework(new_framework)
    c = f.core
    namespace = f.namespace.metadata.name
    name = "condition-test"

    logf("Creating quota %r that allows only two pods to run in the current namespace", name)
    quota = new_pod_quota(name, "2")
    expect_no_error(c.create_namespaced_resource_quota, namespace, quota)

    def synced():
        try:
            got = c.read_namespaced_resource_quota(name, namespace)
        except ApiException as err:
            return False, describe_error(err)
        pod_quota = resource_list_get(got.status.hard if got.status else None, RESOURCE_PODS)
        quantity = must_parse("2")
        return pod_quota.cmp(quantity) == 0, None

    err = poll(1, 60, synced, immediate=True, timeout_error=CONTEXT_DEADLINE)
    if err == CONTEXT_DEADLINE:  # wait.Interrupted(err)
        err = "resource quota %r never synced" % name
    if err is not None:
        fail("unexpected error: %s", err)

    by("Creating rc %r that asks for more than the allowed pod quota" % name)
    rc = new_rc(name, 3, {"name": name}, WEBSERVER_IMAGE_NAME, WEBSERVER_IMAGE, None)
    rc = expect_no_error(c.create_namespaced_replication_controller, namespace, rc)

    by("Checking rc %r has the desired failure condition set" % name)
    generation = rc.metadata.generation or 0
    state = {"conditions": rc.status.conditions if rc.status else None}

    def failure_condition(want_present):
        def condition():
            try:
                got = c.read_namespaced_replication_controller(name, namespace)
            except ApiException as err:
                return False, describe_error(err)
            if generation > _observed_generation(got):
                return False, None
            state["conditions"] = got.status.conditions if got.status else None
            cond = get_condition(got.status, RC_REPLICA_FAILURE)
            return (cond is not None) == want_present, None
        return condition

    err = poll(1, 60, failure_condition(True), immediate=True, timeout_error=CONTEXT_DEADLINE)
    if err == CONTEXT_DEADLINE:
        err = "rc manager never added the failure condition for rc %r: %s" % (
            name, _conditions_repr(state["conditions"]))
    if err is not None:
        fail("unexpected error: %s", err)

    by("Scaling down rc %r to satisfy pod quota" % name)

    def scale_down(update):
        x = 2
        update.spec.replicas = x

    rc, err = update_replication_controller_with_retries(c, namespace, name, scale_down)
    if err is not None:
        fail("unexpected error: %s", err)

    by("Checking rc %r has no failure condition set" % name)
    generation = rc.metadata.generation or 0
    state["conditions"] = rc.status.conditions if rc.status else None
    err = poll(1, 60, failure_condition(False), immediate=True, timeout_error=CONTEXT_DEADLINE)
    if err == CONTEXT_DEADLINE:
        err = "rc manager never removed the failure condition for rc %r: %s" % (
            name, _conditions_repr(state["conditions"]))
    if err is not None:
        fail("unexpected error: %s", err)
