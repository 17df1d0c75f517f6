"""Ports of the Deployment [Conformance] tests of test/e2e/apps/deployment.go
(kubernetes/kubernetes, v1.32): "Deployment should have a working scale subresource",
"RecreateDeployment should delete old pods and create new ones", "RollingUpdateDeployment
should delete old pods and create new ones", "deployment should delete old replica sets",
"deployment should support proportional scaling", "deployment should support rollover",
"should run the lifecycle of a Deployment" and "should validate Deployment Status
endpoints", with the Describe's AfterEach (failureTrap). The helpers they call
(test/e2e/framework/deployment, test/utils/deployment.go, pkg/controller/deployment/util,
test/e2e/framework/replicaset) are in e2e_deployment.py.

They need shepherd-controller-manager's Deployment and ReplicaSet controllers, the scheduler
and the two nodes (conftest.py): the pods run for real.

Image substitutions (the nodes never pull; see e2e_deployment.py):
* WebserverImage (imageutils.Httpd: httpd, serving until stopped) becomes the pause image
  named by its image ID (``pause_image_id()``, "sha256:..." of registry.k8s.io/pause:3.10,
  which containerd resolves locally): a long-running image whose reference differs from
  imageutils.Pause's, as the lifecycle test needs Agnhost, Pause and Httpd to be three
  different images. No ported test connects to the web server. The container name stays
  WebserverImageName ("httpd").
* AgnhostImage (imageutils.Agnhost, run with its default `pause`) becomes AGNHOST_IMAGE
  (agnhost-lite, same Entrypoint/Cmd); the container name stays AgnhostImageName
  ("agnhost").
* imageutils.Pause is the same reference as upstream's (registry.k8s.io/pause:3.10).
* The images upstream means to be missing stay as they are: "webserver:404" and
  "gcr.io/google_samples/gb-redisslave:nonexistent" (the nodes report ErrImagePull).
"""

import json
import threading

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_deployment import (AGNHOST, AGNHOST_IMAGE_NAME, D_RETRY_TIMEOUT, POLL,
                            POLL_SHORT_TIMEOUT, REVISION_ANNOTATION, TIMED_OUT,
                            WEBSERVER_IMAGE_NAME, GoroutineFailure, check_deployment_revision_and_image,
                            dump_pretty, failure_trap, get_new_replica_set, get_old_replica_sets,
                            get_scaled_value_from_int_or_percent, log_pods_of_deployment,
                            log_replica_sets_of_deployment, new_rs, pause_image_id, replicas_of,
                            status_int, update_deployment_with_retries,
                            wait_for_deployment_complete,
                            wait_for_deployment_complete_and_check_rolling,
                            wait_for_deployment_revision_and_image,
                            wait_for_deployment_updated_replicas_gte, wait_for_observed_deployment,
                            wait_for_ready_replica_set,
                            wait_for_replica_set_target_available_replicas, wait_poll_immediate)
from e2e_framework import (PAUSE_IMAGE, POD_START_TIMEOUT, Watcher, WatchClosed, by, conformance,
                           describe_error, expect_no_error, fail, go_deref, logf, new_deployment,
                           rand_string, raw_call, retry_on_conflict, selector_from_set, to_model,
                           verify_pods_running, watch_until)


def webserver_image():
    """WebserverImage (see the module doc)."""
    return pause_image_id()


def deployment_framework(new_framework):
    """SIGDescribe("Deployment"): NewDefaultFramework("deployment"),
    NamespacePodSecurityLevel baseline."""
    return new_framework("deployment", "baseline")


class _Describe:
    """The Describe's BeforeEach (c, ns, dc) and AfterEach (failureTrap)."""

    def __init__(self, new_framework):
        self.f = deployment_framework(new_framework)
        self.c = self.f.core
        self.apps = client.AppsV1Api(self.f.api_client)
        self.ns = self.f.namespace.metadata.name

    def after_each(self):
        failure_trap(self.apps, self.c, self.ns)


def expect_no_err(err, explain=""):
    """framework.ExpectNoError(err, explain...) for the helpers' error texts."""
    if err is not None:
        if explain:
            fail("%s: %s", explain, err)
        fail("unexpected error: %s", err)


def expect_equal(actual, expected, explain=""):
    """gomega.Expect(actual).To(gomega.Equal(expected), explain...)"""
    if actual != expected or type(actual) is not type(expected):
        fail("%sExpected\n    <%s>: %r\nto equal\n    <%s>: %r",
             (explain + "\n") if explain else "", type(actual).__name__, actual,
             type(expected).__name__, expected)


def _sanitize(obj):
    return client.ApiClient().sanitize_for_serialization(obj)


def _is_deployment(event):
    return isinstance(event.get("object"), client.V1Deployment)


def _labels(obj):
    return obj.metadata.labels or {}


# Release: v1.12
# Testname: Deployment RollingUpdate
# Description: A conformant Kubernetes distribution MUST support the Deployment with
# RollingUpdate strategy.
@conformance("[sig-apps] Deployment RollingUpdateDeployment should delete old pods and create "
             "new ones [Conformance]")
def test_rolling_update_deployment(new_framework):
    d = _Describe(new_framework)
    try:
        _test_rolling_update_deployment(d)
    finally:
        d.after_each()


def _test_rolling_update_deployment(t):
    """testRollingUpdateDeployment"""
    ns, c, apps = t.ns, t.c, t.apps
    # Create webserver pods.
    deployment_pod_labels = {"name": "sample-pod"}
    rs_pod_labels = {"name": "sample-pod", "pod": WEBSERVER_IMAGE_NAME}

    rs_name = "test-rolling-update-controller"
    replicas = 1
    rs_revision = "3546343826724305832"
    annotations = {REVISION_ANNOTATION: rs_revision}
    rs = new_rs(rs_name, replicas, rs_pod_labels, WEBSERVER_IMAGE_NAME, webserver_image(), None)
    rs.metadata.annotations = annotations
    logf("Creating replica set %r (going to be adopted)", rs.metadata.name)
    expect_no_error(apps.create_namespaced_replica_set, ns, rs)
    # Verify that the required pods have come up.
    err = verify_pods_running(c, ns, "sample-pod", selector_from_set({"name": "sample-pod"}),
                              False, replicas)
    expect_no_err(err, "error in waiting for pods to come up: %s" % err)

    # Create a deployment to delete webserver pods and instead bring up agnhost pods.
    deployment_name = "test-rolling-update-deployment"
    logf("Creating deployment %r", deployment_name)
    dep = new_deployment(deployment_name, replicas, deployment_pod_labels, AGNHOST_IMAGE_NAME,
                         AGNHOST, "RollingUpdate")
    deploy = expect_no_error(apps.create_namespaced_deployment, ns, dep)

    # Wait for it to be updated to revision 3546343826724305833.
    logf("Ensuring deployment %r gets the next revision from the one the adopted replica set "
         "%r has", deploy.metadata.name, rs.metadata.name)
    err = wait_for_deployment_revision_and_image(apps, ns, deployment_name,
                                                 "3546343826724305833", AGNHOST)
    expect_no_err(err)

    logf("Ensuring status for deployment %r is the expected", deploy.metadata.name)
    err = wait_for_deployment_complete(apps, c, deploy)
    expect_no_err(err)

    # There should be 1 old RS (webserver-controller, which is adopted)
    logf("Ensuring deployment %r has one old replica set (the one it adopted)",
         deploy.metadata.name)
    deployment = expect_no_error(apps.read_namespaced_deployment, deployment_name, ns)
    _, all_old_rss, err = get_old_replica_sets(apps, deployment)
    expect_no_err(err)
    if len(all_old_rss) != 1:
        fail("Expected\n    %s\nto have length 1", [r.metadata.name for r in all_old_rss])


# Release: v1.12
# Testname: Deployment Recreate
# Description: A conformant Kubernetes distribution MUST support the Deployment with Recreate
# strategy.
@conformance("[sig-apps] Deployment RecreateDeployment should delete old pods and create new "
             "ones [Conformance]")
def test_recreate_deployment(new_framework):
    d = _Describe(new_framework)
    try:
        _test_recreate_deployment(d)
    finally:
        d.after_each()


def _test_recreate_deployment(t):
    """testRecreateDeployment"""
    ns, c, apps = t.ns, t.c, t.apps

    # Create a deployment that brings up agnhost pods.
    deployment_name = "test-recreate-deployment"
    logf("Creating deployment %r", deployment_name)
    dep = new_deployment(deployment_name, 1, {"name": "sample-pod-3"}, AGNHOST_IMAGE_NAME,
                         AGNHOST, "Recreate")
    deployment = expect_no_error(apps.create_namespaced_deployment, ns, dep)

    # Wait for it to be updated to revision 1
    logf("Waiting deployment %r to be updated to revision 1", deployment_name)
    err = wait_for_deployment_revision_and_image(apps, ns, deployment_name, "1", AGNHOST)
    expect_no_err(err)

    logf("Waiting deployment %r to complete", deployment_name)
    err = wait_for_deployment_complete(apps, c, deployment)
    expect_no_err(err)

    # Update deployment to delete agnhost pods and bring up webserver pods.
    logf("Triggering a new rollout for deployment %r", deployment_name)

    def update(u):
        u.spec.template.spec.containers[0].name = WEBSERVER_IMAGE_NAME
        u.spec.template.spec.containers[0].image = webserver_image()

    deployment, err = update_deployment_with_retries(apps, ns, deployment_name, update)
    expect_no_err(err)

    logf("Watching deployment %r to verify that new pods will not run with olds pods",
         deployment_name)
    err = watch_recreate_deployment(apps, c, deployment)
    expect_no_err(err)


def watch_recreate_deployment(apps, c, d):
    """watchRecreateDeployment: watches Recreate deployments and ensures no new pods will run
    at the same time with old pods. Returns None or the error text."""
    if d.spec.strategy.type != "Recreate":
        return "deployment %r does not use a Recreate strategy: %s" % (d.metadata.name,
                                                                      d.spec.strategy.type)

    field_selector = "metadata.name=" + d.metadata.name
    state = {"status": d.status}

    def condition(event):
        dep = event["object"]
        if not isinstance(dep, client.V1Deployment):
            fail("interface conversion: runtime.Object is %s, not *v1.Deployment",
                 type(dep).__name__)
        state["status"] = dep.status

        if (status_int(dep, "updated_replicas") > 0 and
                status_int(dep, "replicas") != status_int(dep, "updated_replicas")):
            _, all_old_rss, err = get_old_replica_sets(apps, dep)
            new_rs_obj, nerr = get_new_replica_set(apps, dep)
            if err is None and nerr is None:
                logf("%s", dump_pretty(dep))
                log_replica_sets_of_deployment(dep, all_old_rss, new_rs_obj)
                log_pods_of_deployment(c, dep, all_old_rss + [new_rs_obj])
            return False, "deployment %r is running new pods alongside old pods: %s" % (
                dep.metadata.name, json.dumps(_sanitize(state["status"])))

        return (replicas_of(dep) == status_int(dep, "replicas") and
                replicas_of(dep) == status_int(dep, "updated_replicas") and
                (dep.metadata.generation or 0) <= status_int(dep, "observed_generation")), None

    _, err = watch_until(2 * 60, d.metadata.resource_version, apps.list_namespaced_deployment,
                         d.metadata.namespace, field_selector=field_selector,
                         conditions=[condition])
    if err == TIMED_OUT:  # wait.Interrupted(err)
        err = "deployment %r never completed: %s" % (d.metadata.name,
                                                     json.dumps(_sanitize(state["status"])))
    return err


# Release: v1.12
# Testname: Deployment RevisionHistoryLimit
# Description: A conformant Kubernetes distribution MUST clean up Deployment's ReplicaSets
# based on the Deployment's `.spec.revisionHistoryLimit`.
@conformance("[sig-apps] Deployment deployment should delete old replica sets [Conformance]")
def test_deployment_cleanup_policy(new_framework):
    d = _Describe(new_framework)
    try:
        _test_deployment_cleanup_policy(d)
    finally:
        d.after_each()


def _test_deployment_cleanup_policy(t):
    """testDeploymentCleanUpPolicy"""
    ns, c, apps = t.ns, t.c, t.apps
    # Create webserver pods.
    deployment_pod_labels = {"name": "cleanup-pod"}
    rs_pod_labels = {"name": "cleanup-pod", "pod": WEBSERVER_IMAGE_NAME}
    rs_name = "test-cleanup-controller"
    replicas = 1
    revision_history_limit = 0
    expect_no_error(apps.create_namespaced_replica_set, ns,
                    new_rs(rs_name, replicas, rs_pod_labels, WEBSERVER_IMAGE_NAME,
                           webserver_image(), None))

    # Verify that the required pods have come up.
    err = verify_pods_running(c, ns, "cleanup-pod", selector_from_set({"name": "cleanup-pod"}),
                              False, replicas)
    expect_no_err(err, "error in waiting for pods to come up: %s" % err)

    # Create a deployment to delete webserver pods and instead bring up agnhost pods.
    deployment_name = "test-cleanup-deployment"
    logf("Creating deployment %s", deployment_name)

    pods = expect_no_error(c.list_namespaced_pod, ns, label_selector="",
                           explain="Failed to query for pods")

    stop = threading.Event()
    goroutine = GoroutineFailure()
    w = Watcher(c.list_namespaced_pod, ns, resource_version=pods.metadata.resource_version)

    def watch_pods():
        # There should be only one pod being created, which is the pod with the agnhost image.
        # The old RS shouldn't create new pod when deployment controller adding pod template
        # hash label to its selector.
        num_pod_creation = 1
        while not stop.is_set():
            try:
                event = w.next(0.2)
            except WatchClosed:
                return  # a closed ResultChan yields only zero events from now on
            if event is None:
                continue
            if event["type"] != "ADDED":
                continue
            num_pod_creation -= 1
            if num_pod_creation < 0:
                goroutine.failf("Expect only one pod creation, the second creation event: %s\n",
                                dump_pretty(event["object"]))
                return
            pod = event["object"]
            if not isinstance(pod, client.V1Pod):
                goroutine.failf("Expect event Object to be a pod")
                return
            if pod.spec.containers[0].name != AGNHOST_IMAGE_NAME:
                goroutine.failf("Expect the created pod to have container name %s, got pod %s\n",
                                AGNHOST_IMAGE_NAME, dump_pretty(pod))
                return

    watcher_thread = threading.Thread(target=watch_pods, daemon=True)
    watcher_thread.start()
    try:
        dep = new_deployment(deployment_name, replicas, deployment_pod_labels,
                             AGNHOST_IMAGE_NAME, AGNHOST, "RollingUpdate")
        dep.spec.revision_history_limit = revision_history_limit
        expect_no_error(apps.create_namespaced_deployment, ns, dep)

        by("Waiting for deployment %s history to be cleaned up" % deployment_name)
        err = wait_for_deployment_old_rss_num(apps, ns, deployment_name, revision_history_limit)
        expect_no_err(err)
        goroutine.check()
    finally:
        stop.set()  # defer close(stopCh)
        w.stop()
        watcher_thread.join(5)
    goroutine.check()


def wait_for_deployment_old_rss_num(apps, ns, deployment_name, desired_rs_num):
    """waitForDeploymentOldRSsNum: waits for the deployment to clean up old rcs."""
    state = {"old_rss": [], "d": None}

    def condition():
        try:
            deployment = apps.read_namespaced_deployment(deployment_name, ns)
        except ApiException as err:
            return False, describe_error(err)
        state["d"] = deployment
        _, old_rss, err = get_old_replica_sets(apps, deployment)
        if err is not None:
            return False, err
        state["old_rss"] = old_rss
        return len(old_rss) == desired_rs_num, None

    err = wait_poll_immediate(POLL, 5 * 60, condition)
    if err == TIMED_OUT:
        err = "%d old replica sets were not cleaned up for deployment %r" % (
            len(state["old_rss"]) - desired_rs_num, deployment_name)
        log_replica_sets_of_deployment(state["d"], state["old_rss"], None)
    return err


# Release: v1.12
# Testname: Deployment Rollover
# Description: A conformant Kubernetes distribution MUST support Deployment rollover,
#   i.e. allow arbitrary number of changes to desired state during rolling update
#   before the rollout finishes.
@conformance("[sig-apps] Deployment deployment should support rollover [Conformance]")
def test_rollover_deployment(new_framework):
    d = _Describe(new_framework)
    try:
        _test_rollover_deployment(d)
    finally:
        d.after_each()


def ensure_replicas(rs, replicas):
    """ensureReplicas"""
    expect_equal(replicas_of(rs), replicas)
    expect_equal(status_int(rs, "replicas"), replicas)


def _test_rollover_deployment(t):
    """testRolloverDeployment: we can change desired state and kick off rolling update, then
    change desired state again before it finishes."""
    ns, c, apps = t.ns, t.c, t.apps
    pod_name = "rollover-pod"
    deployment_pod_labels = {"name": pod_name}
    rs_pod_labels = {"name": pod_name, "pod": WEBSERVER_IMAGE_NAME}

    rs_name = "test-rollover-controller"
    rs_replicas = 1
    expect_no_error(apps.create_namespaced_replica_set, ns,
                    new_rs(rs_name, rs_replicas, rs_pod_labels, WEBSERVER_IMAGE_NAME,
                           webserver_image(), None))
    # Verify that the required pods have come up.
    err = verify_pods_running(c, ns, pod_name, selector_from_set({"name": pod_name}), False,
                              rs_replicas)
    expect_no_err(err, "error in waiting for pods to come up: %s" % err)

    # Wait for replica set to become ready before adopting it.
    logf("Waiting for pods owned by replica set %r to become ready", rs_name)
    err = wait_for_ready_replica_set(apps, ns, rs_name)
    expect_no_err(err)

    # Create a deployment to delete webserver pods and instead bring up redis-slave pods.
    # We use a nonexistent image here, so that we make sure it won't finish
    deployment_name, deployment_image_name = "test-rollover-deployment", "redis-slave"
    deployment_replicas = 1
    deployment_image = "gcr.io/google_samples/gb-redisslave:nonexistent"
    deployment_strategy_type = "RollingUpdate"
    logf("Creating deployment %r", deployment_name)
    new_dep = new_deployment(deployment_name, deployment_replicas, deployment_pod_labels,
                             deployment_image_name, deployment_image, deployment_strategy_type)
    new_dep.spec.strategy.rolling_update = client.V1RollingUpdateDeployment(max_unavailable=0,
                                                                            max_surge=1)
    new_dep.spec.min_ready_seconds = 10
    expect_no_error(apps.create_namespaced_deployment, ns, new_dep)

    # Verify that the pods were scaled up and down as expected.
    deployment = expect_no_error(apps.read_namespaced_deployment, deployment_name, ns)
    logf("Make sure deployment %r performs scaling operations", deployment_name)
    # Make sure the deployment starts to scale up and down replica sets by checking if its
    # updated replicas >= 1
    err = wait_for_deployment_updated_replicas_gte(apps, ns, deployment_name,
                                                   deployment_replicas,
                                                   deployment.metadata.generation)
    expect_no_err(err)
    # Check if it's updated to revision 1 correctly
    logf("Check revision of new replica set for deployment %r", deployment_name)
    err = check_deployment_revision_and_image(apps, ns, deployment_name, "1", deployment_image)
    expect_no_err(err)

    logf("Ensure that both replica sets have 1 created replica")
    old_rs = expect_no_error(apps.read_namespaced_replica_set, rs_name, ns)
    ensure_replicas(old_rs, 1)
    new_rs_obj, err = get_new_replica_set(apps, deployment)
    expect_no_err(err)
    ensure_replicas(go_deref(new_rs_obj, "newRS"), 1)

    # The deployment is stuck, update it to rollover the above 2 ReplicaSets and bring up
    # agnhost pods.
    logf("Rollover old replica sets for deployment %r with new image update", deployment_name)
    updated_deployment_image_name, updated_deployment_image = AGNHOST_IMAGE_NAME, AGNHOST

    def update(u):
        u.spec.template.spec.containers[0].name = updated_deployment_image_name
        u.spec.template.spec.containers[0].image = updated_deployment_image

    deployment, err = update_deployment_with_retries(apps, ns, new_dep.metadata.name, update)
    expect_no_err(err)

    # Use observedGeneration to determine if the controller noticed the pod template update.
    logf("Wait deployment %r to be observed by the deployment controller", deployment_name)
    err = wait_for_observed_deployment(apps, ns, deployment_name, deployment.metadata.generation)
    expect_no_err(err)

    # Wait for it to be updated to revision 2
    logf("Wait for revision update of deployment %r to 2", deployment_name)
    err = wait_for_deployment_revision_and_image(apps, ns, deployment_name, "2",
                                                 updated_deployment_image)
    expect_no_err(err)

    logf("Make sure deployment %r is complete", deployment_name)
    err = wait_for_deployment_complete_and_check_rolling(apps, c, deployment)
    expect_no_err(err)

    logf("Ensure that both old replica sets have no replicas")
    old_rs = expect_no_error(apps.read_namespaced_replica_set, rs_name, ns)
    ensure_replicas(old_rs, 0)
    # Not really the new replica set anymore but we GET by name so that's fine.
    new_rs_obj = expect_no_error(apps.read_namespaced_replica_set, new_rs_obj.metadata.name, ns)
    ensure_replicas(new_rs_obj, 0)


# Release: v1.21
# Testname: Deployment, completes the scaling of a Deployment subresource
# Description: Create a Deployment with a single Pod. The Pod MUST be verified
# that it is running. The Deployment MUST get and verify the scale subresource count.
# The Deployment MUST update and verify the scale subresource. The Deployment MUST patch and
# verify a scale subresource.
@conformance("[sig-apps] Deployment Deployment should have a working scale subresource "
             "[Conformance]")
def test_deployment_subresources(new_framework):
    d = _Describe(new_framework)
    try:
        _test_deployment_subresources(d)
    finally:
        d.after_each()


def _test_deployment_subresources(t):
    """testDeploymentSubresources"""
    ns, c, apps = t.ns, t.c, t.apps

    deployment_name = "test-new-deployment"
    logf("Creating simple deployment %s", deployment_name)
    dep = new_deployment("test-new-deployment", 1, {"name": WEBSERVER_IMAGE_NAME},
                         WEBSERVER_IMAGE_NAME, webserver_image(), "RollingUpdate")
    deploy = expect_no_error(apps.create_namespaced_deployment, ns, dep)

    # Wait for it to be updated to revision 1
    err = wait_for_deployment_revision_and_image(apps, ns, deployment_name, "1",
                                                 webserver_image())
    expect_no_err(err)

    err = wait_for_deployment_complete(apps, c, deploy)
    expect_no_err(err)

    expect_no_error(apps.read_namespaced_deployment, deployment_name, ns)

    by("getting scale subresource")
    try:
        scale = apps.read_namespaced_deployment_scale(deployment_name, ns)
    except ApiException as err:
        fail("Failed to get scale subresource: %s", describe_error(err))
    expect_equal(scale.spec.replicas or 0, 1)
    expect_equal(scale.status.replicas or 0, 1)

    by("updating a scale subresource")
    scale.metadata.resource_version = ""  # indicate the scale update should be unconditional
    scale.spec.replicas = 2
    try:
        scale_result = apps.replace_namespaced_deployment_scale(deployment_name, ns, scale)
    except ApiException as err:
        fail("Failed to put scale subresource: %s", describe_error(err))
    expect_equal(scale_result.spec.replicas or 0, 2)

    by("verifying the deployment Spec.Replicas was modified")
    try:
        deployment = apps.read_namespaced_deployment(deployment_name, ns)
    except ApiException as err:
        fail("Failed to get deployment resource: %s", describe_error(err))
    expect_equal(replicas_of(deployment), 2)

    by("Patch a scale subresource")
    scale.metadata.resource_version = ""  # indicate the scale update should be unconditional
    scale.spec.replicas = 4  # should be 2 after "UpdateScale" operation, now Patch to 4
    # json.Marshal(autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 4}}): the zero
    # ObjectMeta and ScaleStatus are structs, which encoding/json always writes.
    deployment_scale_patch_payload = {"metadata": {"creationTimestamp": None},
                                      "spec": {"replicas": scale.spec.replicas},
                                      "status": {"replicas": 0}}
    expect_no_error(raw_call, t.f.api_client, "PATCH",
                    "/apis/apps/v1/namespaces/%s/deployments/%s/scale" % (ns, deployment_name),
                    body=deployment_scale_patch_payload,
                    headers={"Content-Type": "application/strategic-merge-patch+json"},
                    response_type="V1Scale", explain="Failed to patch deployment")

    deployment = expect_no_error(apps.read_namespaced_deployment, deployment_name, ns,
                                 explain="Failed to get deployment resource")
    expect_equal(replicas_of(deployment), 4, "deployment should have 4 replicas")


# Release: v1.12
# Testname: Deployment Proportional Scaling
# Description: A conformant Kubernetes distribution MUST support Deployment
#   proportional scaling, i.e. proportionally scale a Deployment's ReplicaSets
#   when a Deployment is scaled.
@conformance("[sig-apps] Deployment deployment should support proportional scaling "
             "[Conformance]")
def test_proportional_scaling_deployment(new_framework):
    d = _Describe(new_framework)
    try:
        _test_proportional_scaling_deployment(d)
    finally:
        d.after_each()


def wait_for_replica_set_desired_replicas(apps, replica_set):
    """waitForReplicaSetDesiredReplicas: PollUntilContextTimeout(Poll, PollShortTimeout,
    immediate) until the replicaset has desired number of replicas."""
    desired_generation = replica_set.metadata.generation or 0

    def condition():
        try:
            rs = apps.read_namespaced_replica_set(replica_set.metadata.name,
                                                  replica_set.metadata.namespace)
        except ApiException as err:
            return False, describe_error(err)
        return (status_int(rs, "observed_generation") >= desired_generation and
                status_int(rs, "replicas") == replicas_of(replica_set) and
                status_int(rs, "replicas") == replicas_of(rs)), None

    err = wait_poll_immediate(POLL, POLL_SHORT_TIMEOUT, condition)
    if err == TIMED_OUT:
        err = "replicaset %r never had desired number of replicas" % replica_set.metadata.name
    return err


def wait_for_replica_set_target_spec_replicas(apps, replica_set, target_replica_num):
    """waitForReplicaSetTargetSpecReplicas: waits for .spec.replicas of a RS to equal
    targetReplicaNum."""
    desired_generation = replica_set.metadata.generation or 0

    def condition():
        try:
            rs = apps.read_namespaced_replica_set(replica_set.metadata.name,
                                                  replica_set.metadata.namespace)
        except ApiException as err:
            return False, describe_error(err)
        return (status_int(rs, "observed_generation") >= desired_generation and
                replicas_of(rs) == target_replica_num), None

    err = wait_poll_immediate(POLL, POLL_SHORT_TIMEOUT, condition)
    if err == TIMED_OUT:
        err = "replicaset %r never had desired number of .spec.replicas" % (
            replica_set.metadata.name)
    return err


def _test_proportional_scaling_deployment(t):
    """testProportionalScalingDeployment: when a RollingUpdate Deployment is scaled in the
    middle of a rollout (either in progress or paused), then the Deployment will balance
    additional replicas in existing active ReplicaSets (ReplicaSets with more than 0 replica)
    in order to mitigate risk."""
    ns, c, apps = t.ns, t.c, t.apps

    pod_labels = {"name": WEBSERVER_IMAGE_NAME}
    replicas = 10

    # Create a webserver deployment.
    deployment_name = "webserver-deployment"
    dep = new_deployment(deployment_name, replicas, pod_labels, WEBSERVER_IMAGE_NAME,
                         webserver_image(), "RollingUpdate")
    dep.spec.strategy.rolling_update = client.V1RollingUpdateDeployment()
    dep.spec.strategy.rolling_update.max_surge = 3
    dep.spec.strategy.rolling_update.max_unavailable = 2

    logf("Creating deployment %r", deployment_name)
    deployment = expect_no_error(apps.create_namespaced_deployment, ns, dep)

    logf("Waiting for observed generation %d", deployment.metadata.generation)
    err = wait_for_observed_deployment(apps, ns, deployment_name, deployment.metadata.generation)
    expect_no_err(err)

    # Verify that the required pods have come up.
    logf("Waiting for all required pods to come up")
    err = verify_pods_running(c, ns, WEBSERVER_IMAGE_NAME,
                              selector_from_set({"name": WEBSERVER_IMAGE_NAME}), False,
                              replicas_of(deployment))
    expect_no_err(err, "error in waiting for pods to come up: %s" % err)

    logf("Waiting for deployment %r to complete", deployment.metadata.name)
    err = wait_for_deployment_complete(apps, c, deployment)
    expect_no_err(err)

    first_rs, err = get_new_replica_set(apps, deployment)
    expect_no_err(err)
    first_rs = go_deref(first_rs, "firstRS")

    # Update the deployment with a non-existent image so that the new replica set
    # will be blocked to simulate a partial rollout.
    logf("Updating deployment %r with a non-existent image", deployment_name)

    def set_image(u):
        u.spec.template.spec.containers[0].image = "webserver:404"

    deployment, err = update_deployment_with_retries(apps, ns, dep.metadata.name, set_image)
    expect_no_err(err)

    logf("Waiting for observed generation %d", deployment.metadata.generation)
    err = wait_for_observed_deployment(apps, ns, deployment_name, deployment.metadata.generation)
    expect_no_err(err)

    # Checking state of first rollout's replicaset.
    max_unavailable, err = get_scaled_value_from_int_or_percent(
        deployment.spec.strategy.rolling_update.max_unavailable, replicas_of(deployment), False)
    expect_no_err(err)

    # First rollout's replicaset should have Deployment's (replicas - maxUnavailable) =
    # 10 - 2 = 8 available replicas.
    min_available_replicas = replicas - max_unavailable
    logf("Waiting for the first rollout's replicaset to have .status.availableReplicas = %d",
         min_available_replicas)
    err = wait_for_replica_set_target_available_replicas(apps, first_rs, min_available_replicas)
    expect_no_err(err)

    # First rollout's replicaset should have .spec.replicas = 8 too.
    logf("Waiting for the first rollout's replicaset to have .spec.replicas = %d",
         min_available_replicas)
    err = wait_for_replica_set_target_spec_replicas(apps, first_rs, min_available_replicas)
    expect_no_err(err)

    # The desired replicas wait makes sure that the RS controller has created expected number
    # of pods.
    logf("Waiting for the first rollout's replicaset of deployment %r to have desired number "
         "of replicas", deployment_name)
    first_rs = expect_no_error(apps.read_namespaced_replica_set, first_rs.metadata.name, ns)
    err = wait_for_replica_set_desired_replicas(apps, first_rs)
    expect_no_err(err)

    # Checking state of second rollout's replicaset.
    second_rs, err = get_new_replica_set(apps, deployment)
    expect_no_err(err)
    second_rs = go_deref(second_rs, "secondRS")

    max_surge, err = get_scaled_value_from_int_or_percent(
        deployment.spec.strategy.rolling_update.max_surge, replicas_of(deployment), False)
    expect_no_err(err)

    # Second rollout's replicaset should have 0 available replicas.
    logf("Verifying that the second rollout's replicaset has .status.availableReplicas = 0")
    expect_equal(status_int(second_rs, "available_replicas"), 0)

    # Second rollout's replicaset should have Deployment's (replicas + maxSurge - first RS's
    # replicas) = 10 + 3 - 8 = 5 for .spec.replicas.
    new_replicas = replicas + max_surge - min_available_replicas
    logf("Waiting for the second rollout's replicaset to have .spec.replicas = %d",
         new_replicas)
    err = wait_for_replica_set_target_spec_replicas(apps, second_rs, new_replicas)
    expect_no_err(err)

    # The desired replicas wait makes sure that the RS controller has created expected number
    # of pods.
    logf("Waiting for the second rollout's replicaset of deployment %r to have desired number "
         "of replicas", deployment_name)
    second_rs = expect_no_error(apps.read_namespaced_replica_set, second_rs.metadata.name, ns)
    err = wait_for_replica_set_desired_replicas(apps, second_rs)
    expect_no_err(err)

    # Check the deployment's minimum availability.
    logf("Verifying that deployment %r has minimum required number of available replicas",
         deployment_name)
    if status_int(deployment, "available_replicas") < min_available_replicas:
        expect_no_err("observed %d available replicas, less than min required %d" % (
            status_int(deployment, "available_replicas"), min_available_replicas))

    # Scale the deployment to 30 replicas.
    new_replicas = 30
    logf("Scaling up the deployment %r from %d to %d", deployment_name, replicas, new_replicas)

    def scale(u):
        u.spec.replicas = new_replicas

    _, err = update_deployment_with_retries(apps, ns, deployment.metadata.name, scale)
    expect_no_err(err)

    logf("Waiting for the replicasets of deployment %r to have desired number of replicas",
         deployment_name)
    first_rs = expect_no_error(apps.read_namespaced_replica_set, first_rs.metadata.name, ns)
    second_rs = expect_no_error(apps.read_namespaced_replica_set, second_rs.metadata.name, ns)

    # First rollout's replicaset should have .spec.replicas = 8 + (30-10)*(8/13) = 8 + 12 = 20
    # replicas. Note that 12 comes from rounding (30-10)*(8/13) to nearest integer.
    logf("Verifying that first rollout's replicaset has .spec.replicas = 20")
    err = wait_for_replica_set_target_spec_replicas(apps, first_rs, 20)
    expect_no_err(err)

    # Second rollout's replicaset should have .spec.replicas = 5 + (30-10)*(5/13) = 5 + 8 = 13
    # replicas. Note that 8 comes from rounding (30-10)*(5/13) to nearest integer.
    logf("Verifying that second rollout's replicaset has .spec.replicas = 13")
    err = wait_for_replica_set_target_spec_replicas(apps, second_rs, 13)
    expect_no_err(err)


def _to_unstructured(deployment):
    """runtime.DefaultUnstructuredConverter.ToUnstructured(&deployment) of a Deployment built
    in the test: the JSON fields, plus the zero-valued structs encoding/json always writes
    (creationTimestamp null, container resources {}, status {})."""
    u = _sanitize(deployment)
    u.setdefault("metadata", {})["creationTimestamp"] = None
    tmpl = u["spec"]["template"]
    tmpl.setdefault("metadata", {})["creationTimestamp"] = None
    for ctr in tmpl["spec"]["containers"]:
        ctr.setdefault("resources", {})
    u["spec"].setdefault("strategy", {})
    u.setdefault("status", {})
    return u


# Release: v1.20
# Testname: Deployment, completes the lifecycle of a Deployment
# Description: When a Deployment is created it MUST succeed with the required number of
# replicas. It MUST succeed when the Deployment is patched. When scaling the deployment is
# MUST succeed. When fetching and patching the DeploymentStatus it MUST succeed. It MUST
# succeed when deleting the Deployment.
@conformance("[sig-apps] Deployment should run the lifecycle of a Deployment [Conformance]")
def test_deployment_lifecycle(new_framework):
    d = _Describe(new_framework)
    try:
        _test_deployment_lifecycle(d)
    finally:
        d.after_each()


def _test_deployment_lifecycle(t):
    f, apps = t.f, t.apps
    one = 1
    two = 2
    test_namespace_name = f.namespace.metadata.name
    test_deployment_name = "test-deployment"
    test_deployment_initial_image = AGNHOST           # imageutils.GetE2EImage(imageutils.Agnhost)
    test_deployment_patch_image = PAUSE_IMAGE         # imageutils.GetE2EImage(imageutils.Pause)
    test_deployment_update_image = webserver_image()  # imageutils.GetE2EImage(imageutils.Httpd)
    test_deployment_default_replicas = 2
    test_deployment_minimum_replicas = 1
    test_deployment_no_replicas = 0
    test_deployment_available_replicas = 0
    test_deployment_labels = {"test-deployment-static": "true"}
    test_deployment_labels_flat = "test-deployment-static=true"
    # w: a ListWatch whose WatchFunc watches the namespace's Deployments with the label
    # selector; every watchtools.Until below starts a RetryWatcher on it.
    w = (apps.list_namespaced_deployment, test_namespace_name)

    def until(timeout, rv, condition):
        return watch_until(timeout, rv, *w, label_selector=test_deployment_labels_flat,
                           conditions=[condition])

    deployments_list = expect_no_error(apps.list_deployment_for_all_namespaces,
                                       label_selector=test_deployment_labels_flat,
                                       explain="failed to list Deployments")

    by("creating a Deployment")
    test_deployment = new_deployment(
        test_deployment_name, test_deployment_default_replicas, test_deployment_labels,
        test_deployment_name, test_deployment_initial_image, "RollingUpdate")
    test_deployment.metadata.labels = {"test-deployment-static": "true"}
    test_deployment.spec.template.spec.termination_grace_period_seconds = one

    expect_no_error(apps.create_namespaced_deployment, test_namespace_name, test_deployment,
                    explain="failed to create Deployment %s in namespace %s" % (
                        test_deployment_name, test_namespace_name))

    def found_static(deployment):
        return (deployment.metadata.name == test_deployment.metadata.name and
                _labels(deployment).get("test-deployment-static") == "true")

    by("waiting for Deployment to be created")

    def created(event):
        if event["type"] == "ADDED":
            if _is_deployment(event):
                return found_static(event["object"]), None
        else:
            logf("observed event type %s", event["type"])
        return False, None

    _, err = until(30, deployments_list.metadata.resource_version, created)
    expect_no_err(err, "failed to see %s event" % "ADDED")

    by("waiting for all Replicas to be Ready")

    def all_ready(event):
        if _is_deployment(event):
            deployment = event["object"]
            found = (found_static(deployment) and
                     status_int(deployment, "ready_replicas") == test_deployment_default_replicas)
            if not found:
                logf("observed Deployment %s in namespace %s with ReadyReplicas %d and labels %s",
                     deployment.metadata.name, deployment.metadata.namespace,
                     status_int(deployment, "ready_replicas"), deployment.metadata.labels)
            logf("observed Deployment %s in namespace %s with ReadyReplicas %d and labels %s",
                 deployment.metadata.name, deployment.metadata.namespace,
                 status_int(deployment, "ready_replicas"), deployment.metadata.labels)
            return found, None
        return False, None

    _, err = until(POD_START_TIMEOUT, deployments_list.metadata.resource_version, all_ready)
    expect_no_err(err, "failed to see replicas of %s in namespace %s scale to requested amount "
                       "of %d" % (test_deployment.metadata.name, test_namespace_name,
                                  test_deployment_default_replicas))

    by("patching the Deployment")
    deployment_patch = {
        "metadata": {"labels": {"test-deployment": "patched"}},
        "spec": {
            "replicas": test_deployment_minimum_replicas,
            "template": {
                "spec": {
                    "terminationGracePeriodSeconds": two,
                    "containers": [{"name": test_deployment_name,
                                    "image": test_deployment_patch_image}],
                },
            },
        },
    }
    # (a dict body: the official client sends a strategic merge patch)
    expect_no_error(apps.patch_namespaced_deployment, test_deployment_name, test_namespace_name,
                    deployment_patch, explain="failed to patch Deployment")

    def modified_static(event):
        if event["type"] == "MODIFIED":
            if _is_deployment(event):
                deployment = event["object"]
                found = found_static(deployment)
                if not found:
                    logf("observed Deployment %s in namespace %s with ReadyReplicas %d",
                         deployment.metadata.name, deployment.metadata.namespace,
                         status_int(deployment, "ready_replicas"))
                return found, None
        else:
            logf("observed event type %s", event["type"])
        return False, None

    _, err = until(30, deployments_list.metadata.resource_version, modified_static)
    expect_no_err(err, "failed to see %s event" % "MODIFIED")

    by("waiting for Replicas to scale")

    def scaled(event):
        if _is_deployment(event):
            deployment = event["object"]
            found = (found_static(deployment) and
                     status_int(deployment, "ready_replicas") == test_deployment_minimum_replicas and
                     status_int(deployment, "updated_replicas") ==
                     test_deployment_minimum_replicas and
                     status_int(deployment, "unavailable_replicas") == 0 and
                     deployment.spec.template.spec.containers[0].image ==
                     test_deployment_patch_image and
                     go_deref(deployment.spec.template.spec.termination_grace_period_seconds,
                              "deployment.Spec.Template.Spec.TerminationGracePeriodSeconds") == two)
            if not found:
                logf("observed Deployment %s in namespace %s with ReadyReplicas %d",
                     deployment.metadata.name, deployment.metadata.namespace,
                     status_int(deployment, "ready_replicas"))
            logf("observed Deployment %s in namespace %s with ReadyReplicas %d",
                 deployment.metadata.name, deployment.metadata.namespace,
                 status_int(deployment, "ready_replicas"))
            return found, None
        return False, None

    _, err = until(POD_START_TIMEOUT, deployments_list.metadata.resource_version, scaled)
    expect_no_err(err, "failed to see replicas of %s in namespace %s scale to requested amount "
                       "of %d" % (test_deployment.metadata.name, test_namespace_name,
                                  test_deployment_minimum_replicas))

    by("listing Deployments")
    deployments_list = expect_no_error(apps.list_deployment_for_all_namespaces,
                                       label_selector=test_deployment_labels_flat,
                                       explain="failed to list Deployments")
    found_deployment = False
    for deployment_item in deployments_list.items:
        if (deployment_item.metadata.name == test_deployment_name and
                deployment_item.metadata.namespace == test_namespace_name and
                _labels(deployment_item).get("test-deployment-static") == "true"):
            found_deployment = True
            logf("Found %s with labels: %s", deployment_item.metadata.name,
                 deployment_item.metadata.labels)
            break
    if not found_deployment:
        fail("unable to find the Deployment in the following list %s",
             dump_pretty(deployments_list))

    by("updating the Deployment")
    test_deployment_update = test_deployment  # the same object, as upstream's pointer copy
    test_deployment_update.metadata.labels["test-deployment"] = "updated"
    test_deployment_update.spec.template.spec.containers[0].image = test_deployment_update_image
    test_deployment_update.spec.replicas = test_deployment_default_replicas
    test_deployment_update_unstructured = _to_unstructured(test_deployment_update)
    # currently this hasn't been able to hit the endpoint
    # replaceAppsV1NamespacedDeploymentStatus
    # (f.DynamicClient ... Update(ctx, &testDeploymentUpdateUnstructured, ...))
    expect_no_error(raw_call, f.api_client, "PUT",
                    "/apis/apps/v1/namespaces/%s/deployments/%s" % (test_namespace_name,
                                                                   test_deployment_name),
                    body=test_deployment_update_unstructured,
                    explain="failed to update the DeploymentStatus")

    def modified_static_logged(event):
        if event["type"] == "MODIFIED":
            if _is_deployment(event):
                deployment = event["object"]
                found = found_static(deployment)
                if not found:
                    logf("observed Deployment %s in namespace %s with ReadyReplicas %d",
                         deployment.metadata.name, deployment.metadata.namespace,
                         status_int(deployment, "ready_replicas"))
                logf("observed Deployment %s in namespace %s with ReadyReplicas %d",
                     deployment.metadata.name, deployment.metadata.namespace,
                     status_int(deployment, "ready_replicas"))
                return found, None
        else:
            logf("observed event type %s", event["type"])
        return False, None

    _, err = until(30, deployments_list.metadata.resource_version, modified_static_logged)
    expect_no_err(err, "failed to see %s event" % "MODIFIED")

    status_path = "/apis/apps/v1/namespaces/%s/deployments/%s/status" % (test_namespace_name,
                                                                        test_deployment_name)
    by("fetching the DeploymentStatus")
    deployment_get_unstructured = expect_no_error(raw_call, f.api_client, "GET", status_path,
                                                  explain="failed to fetch the Deployment")
    deployment_get = to_model(deployment_get_unstructured, "V1Deployment")
    expect_equal(deployment_get.spec.template.spec.containers[0].image,
                 test_deployment_update_image, "failed to update image")
    if _labels(deployment_get).get("test-deployment") != "updated":
        fail("failed to update labels\nExpected\n    %s\nto have {key: value}\n    %s",
             _labels(deployment_get), {"test-deployment": "updated"})

    def all_updated(event):
        if _is_deployment(event):
            deployment = event["object"]
            found = (found_static(deployment) and
                     status_int(deployment, "ready_replicas") == test_deployment_default_replicas and
                     status_int(deployment, "updated_replicas") ==
                     test_deployment_default_replicas and
                     status_int(deployment, "unavailable_replicas") == 0)
            if not found:
                logf("observed Deployment %s in namespace %s with ReadyReplicas %d and labels %s",
                     deployment.metadata.name, deployment.metadata.namespace,
                     status_int(deployment, "ready_replicas"), deployment.metadata.labels)
            return found, None
        return False, None

    _, err = until(POD_START_TIMEOUT, deployments_list.metadata.resource_version, all_updated)
    expect_no_err(err, "failed to see replicas of %s in namespace %s scale to requested amount "
                       "of %d" % (test_deployment.metadata.name, test_namespace_name,
                                  test_deployment_default_replicas))

    by("patching the DeploymentStatus")
    deployment_status_patch = {"status": {"readyReplicas": test_deployment_no_replicas,
                                          "availableReplicas": test_deployment_available_replicas}}
    expect_no_error(raw_call, f.api_client, "PATCH", status_path, body=deployment_status_patch,
                    headers={"Content-Type": "application/strategic-merge-patch+json"})

    def status_patched(event):
        if event["type"] == "MODIFIED":
            if _is_deployment(event):
                deployment = event["object"]
                found = (deployment.metadata.name == test_deployment.metadata.name and
                         status_int(deployment, "ready_replicas") == test_deployment_no_replicas and
                         status_int(deployment, "available_replicas") ==
                         test_deployment_available_replicas)
                return found, None
        else:
            logf("observed event type %s", event["type"])
        return False, None

    _, err = until(30, deployments_list.metadata.resource_version, status_patched)
    expect_no_err(err, "failed to see %s event" % "MODIFIED")

    by("fetching the DeploymentStatus")
    deployment_get_unstructured = expect_no_error(raw_call, f.api_client, "GET", status_path,
                                                  explain="failed to fetch the DeploymentStatus")
    deployment_get = to_model(deployment_get_unstructured, "V1Deployment")
    expect_equal(deployment_get.spec.template.spec.containers[0].image,
                 test_deployment_update_image, "failed to update image")
    if _labels(deployment_get).get("test-deployment") != "updated":
        fail("failed to update labels\nExpected\n    %s\nto have {key: value}\n    %s",
             _labels(deployment_get), {"test-deployment": "updated"})

    def all_updated_image(event):
        if _is_deployment(event):
            deployment = event["object"]
            found = (found_static(deployment) and
                     status_int(deployment, "ready_replicas") == test_deployment_default_replicas and
                     status_int(deployment, "updated_replicas") ==
                     test_deployment_default_replicas and
                     status_int(deployment, "unavailable_replicas") == 0 and
                     deployment.spec.template.spec.containers[0].image ==
                     test_deployment_update_image)
            if not found:
                logf("observed Deployment %s in namespace %s with ReadyReplicas %d",
                     deployment.metadata.name, deployment.metadata.namespace,
                     status_int(deployment, "ready_replicas"))
            return found, None
        return False, None

    _, err = until(POD_START_TIMEOUT, deployments_list.metadata.resource_version,
                   all_updated_image)
    expect_no_err(err, "failed to see replicas of %s in namespace %s scale to requested amount "
                       "of %d" % (test_deployment.metadata.name, test_namespace_name,
                                  test_deployment_default_replicas))

    by("deleting the Deployment")
    expect_no_error(apps.delete_collection_namespaced_deployment, test_namespace_name,
                    label_selector=test_deployment_labels_flat,
                    body=client.V1DeleteOptions(grace_period_seconds=one),
                    explain="failed to delete Deployment via collection")

    def deleted(event):
        if event["type"] == "DELETED":
            if _is_deployment(event):
                deployment = event["object"]
                found = found_static(deployment)
                if not found:
                    logf("observed Deployment %s in namespace %s with ReadyReplicas %d",
                         deployment.metadata.name, deployment.metadata.namespace,
                         status_int(deployment, "ready_replicas"))
                return found, None
        else:
            logf("observed event type %s", event["type"])
        return False, None

    _, err = until(60, deployments_list.metadata.resource_version, deleted)
    expect_no_err(err, "failed to see %s event" % "DELETED")


# Release: v1.22
# Testname: Deployment, status sub-resource
# Description: When a Deployment is created it MUST succeed.
# Attempt to read, update and patch its status sub-resource; all
# mutating sub-resource operations MUST be visible to subsequent reads.
@conformance("[sig-apps] Deployment should validate Deployment Status endpoints [Conformance]")
def test_deployment_status_endpoints(new_framework):
    d = _Describe(new_framework)
    try:
        _test_deployment_status_endpoints(d)
    finally:
        d.after_each()


def _event_object_kind(event):
    """strings.Split(fmt.Sprintf("%v", event.Object), "{")[0]"""
    obj = event.get("object")
    if obj is None:
        return "<nil>"
    return "&" if hasattr(obj, "metadata") else type(obj).__name__


def _test_deployment_status_endpoints(t):
    f, c, ns, apps = t.f, t.c, t.ns, t.apps
    d_name = "test-deployment-" + rand_string(5)
    label_selector = "e2e=testing"

    def until(timeout, rv, condition):
        return watch_until(timeout, rv, apps.list_namespaced_deployment, ns,
                           label_selector=label_selector, conditions=[condition])

    d_list = expect_no_error(apps.list_deployment_for_all_namespaces,
                             label_selector=label_selector, explain="failed to list Deployments")

    by("creating a Deployment")

    pod_labels = {"name": WEBSERVER_IMAGE_NAME, "e2e": "testing"}
    replicas = 1
    logf("Creating simple deployment %s", d_name)
    dep = new_deployment(d_name, replicas, pod_labels, WEBSERVER_IMAGE_NAME, webserver_image(),
                         "RollingUpdate")
    deploy = expect_no_error(apps.create_namespaced_deployment, ns, dep)

    # Wait for it to be updated to revision 1
    err = wait_for_deployment_revision_and_image(apps, ns, d_name, "1", webserver_image())
    expect_no_err(err)

    err = wait_for_deployment_complete(apps, c, deploy)
    expect_no_err(err)

    test_deployment = expect_no_error(apps.read_namespaced_deployment, d_name, ns)

    by("Getting /status")
    d_status_unstructured = expect_no_error(
        raw_call, f.api_client, "GET",
        "/apis/apps/v1/namespaces/%s/deployments/%s/status" % (ns, d_name),
        explain="Failed to fetch the status of deployment %s in namespace %s" % (d_name, ns))
    d_status = to_model(d_status_unstructured, "V1Deployment")
    logf("Deployment %s has Conditions: %s", d_name,
         _sanitize(d_status.status.conditions if d_status.status else None))

    by("updating Deployment Status")
    updated = []

    def update():
        status_to_update = expect_no_error(apps.read_namespaced_deployment, d_name, ns,
                                           explain="Unable to retrieve deployment %s" % d_name)
        if status_to_update.status is None:
            status_to_update.status = client.V1DeploymentStatus()
        status_to_update.status.conditions = (status_to_update.status.conditions or []) + [
            client.V1DeploymentCondition(type="StatusUpdate", status="True", reason="E2E",
                                         message="Set from e2e test")]
        updated.append(apps.replace_namespaced_deployment_status(d_name, ns, status_to_update))
        return updated[-1]

    expect_no_error(retry_on_conflict, update, explain="Failed to update status.")
    logf("updatedStatus.Conditions: %s", _sanitize(updated[-1].status.conditions))

    by("watching for the Deployment status to be updated")

    def status_updated(event):
        if _is_deployment(event):
            d = event["object"]
            conditions = (d.status.conditions if d.status else None) or []
            found = (d.metadata.name == test_deployment.metadata.name and
                     d.metadata.namespace == test_deployment.metadata.namespace and
                     _labels(d).get("e2e") == "testing")
            if not found:
                logf("Observed Deployment %s in namespace %s with annotations: %s & "
                     "Conditions: %s\n", d.metadata.name, d.metadata.namespace,
                     d.metadata.annotations, _sanitize(conditions))
                return False, None
            for cond in conditions:
                if (cond.type == "StatusUpdate" and cond.reason == "E2E" and
                        cond.message == "Set from e2e test"):
                    logf("Found Deployment %s in namespace %s with labels: %s annotations: %s & "
                         "Conditions: %s", d.metadata.name, d.metadata.namespace,
                         d.metadata.labels, d.metadata.annotations, _sanitize(cond))
                    return found, None
                logf("Observed Deployment %s in namespace %s with annotations: %s & "
                     "Conditions: %s", d.metadata.name, d.metadata.namespace,
                     d.metadata.annotations, _sanitize(cond))
        logf("Observed %s event: %s", _event_object_kind(event), event["type"])
        return False, None

    _, err = until(D_RETRY_TIMEOUT, d_list.metadata.resource_version, status_updated)
    expect_no_err(err, "failed to locate Deployment %s in namespace %s" % (
        test_deployment.metadata.name, ns))
    logf("Deployment %s has an updated status", d_name)

    by("patching the Statefulset Status")
    payload = '{"status":{"conditions":[{"type":"StatusPatched","status":"True"}]}}'
    logf("Patch payload: %s", payload)

    patched_deployment = expect_no_error(
        raw_call, f.api_client, "PATCH",
        "/apis/apps/v1/namespaces/%s/deployments/%s/status" % (ns, d_name),
        body=json.loads(payload), headers={"Content-Type": "application/merge-patch+json"},
        response_type="V1Deployment", explain="Failed to patch status.")
    logf("Patched status conditions: %s", _sanitize(patched_deployment.status.conditions))

    by("watching for the Deployment status to be patched")

    def status_patched(event):
        if _is_deployment(event):
            e = event["object"]
            found = (e.metadata.name == test_deployment.metadata.name and
                     e.metadata.namespace == test_deployment.metadata.namespace and
                     _labels(e).get("e2e") == _labels(test_deployment).get("e2e"))
            if not found:
                logf("Observed deployment %s in namespace %s with annotations: %s & "
                     "Conditions: %s", test_deployment.metadata.name,
                     test_deployment.metadata.namespace, test_deployment.metadata.annotations,
                     _sanitize(test_deployment.status.conditions))
                return False, None
            for cond in (e.status.conditions if e.status else None) or []:
                if cond.type == "StatusPatched":
                    logf("Found deployment %s in namespace %s with labels: %s annotations: %s & "
                         "Conditions: %s", test_deployment.metadata.name,
                         test_deployment.metadata.namespace, test_deployment.metadata.labels,
                         test_deployment.metadata.annotations, _sanitize(cond))
                    return found, None
                logf("Observed deployment %s in namespace %s with annotations: %s & "
                     "Conditions: %s", test_deployment.metadata.name,
                     test_deployment.metadata.namespace, test_deployment.metadata.annotations,
                     _sanitize(cond))
        logf("Observed %s event: %s", _event_object_kind(event), event["type"])
        return False, None

    _, err = until(D_RETRY_TIMEOUT, d_list.metadata.resource_version, status_patched)
    expect_no_err(err, "failed to locate deployment %s in namespace %s" % (
        test_deployment.metadata.name, ns))
    logf("Deployment %s has a patched status", d_name)
