"""The parts of upstream's Deployment/ReplicaSet e2e helpers the ported apps tests use.

Upstream (kubernetes/kubernetes):

* pkg/controller/deployment/util/deployment_util.go (deploymentutil): ListReplicaSets,
  FindNewReplicaSet, FindOldReplicaSets, EqualIgnoreHash, DeploymentComplete, MaxSurge,
  MaxUnavailable, MinAvailable, ResolveFenceposts, GetReplicaCountForReplicaSets,
  WaitForObservedDeployment, ListPods; pkg/util/labels (SelectorHasLabel);
  k8s.io/apimachinery intstr.GetScaledValueFromIntOrPercent;
* test/utils/deployment.go (testutil): GetAllReplicaSets, GetOldReplicaSets,
  GetNewReplicaSet, WaitForDeploymentComplete(AndCheckRolling), checkRollingUpdateStatus,
  WaitForDeploymentRevisionAndImage, CheckDeploymentRevisionAndImage,
  UpdateDeploymentWithRetries, WaitForObservedDeployment,
  WaitForDeploymentUpdatedReplicasGTE, LogReplicaSetsOfDeployment, LogPodsOfDeployment;
* test/e2e/framework/deployment (e2edeployment): the same waits with poll 2 s and
  pollLongTimeout 5 min, UpdateDeploymentWithRetries with pollShortTimeout 1 min;
* test/e2e/framework/replicaset/wait.go (e2ereplicaset): WaitForReadyReplicaSet,
  WaitForReplicaSetTargetAvailableReplicas;
* test/e2e/apps/deployment.go: failureTrap (the Describe's AfterEach, logging only);
* test/e2e/apps/types.go and test/e2e/apps/replica_set.go: the image names and newRS.

Every wait returns None or the error text (Go's error), so that the tests keep upstream's
framework.ExpectNoError at the call site.

Images (the nodes never pull; kubelet-lite/images/build-images.sh): upstream's
WebserverImage (imageutils.Httpd, httpd serving forever) becomes the pause image
(registry.k8s.io/pause:3.10), which runs until it is stopped; no ported test connects to
the web server. AgnhostImage (run with its default `pause`) becomes AGNHOST_IMAGE
(agnhost-lite, whose default command is `pause` too). The busybox image is not a stand-in:
its default command `sh` exits at once without a terminal, so its pods never become ready.
``pause_image_id()`` is the same pause image named by its image ID (the config digest,
which containerd's CRI resolves locally), for a test that needs a third, distinct,
long-running image reference.
"""

import datetime
import json
import math
import os
import sys
import tarfile
import threading
import time

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import (AGNHOST_IMAGE, PAUSE_IMAGE, POD_START_TIMEOUT, by, describe_error,
                           fail, logf, semantic_equal)

# --------------------------------------------------------------------------- constants

POLL = 2.0                   # framework.Poll, deployment.go's poll, e2edeployment's poll
POLL_SHORT_TIMEOUT = 60.0    # framework.PollShortTimeout, e2edeployment's pollShortTimeout
POLL_LONG_TIMEOUT = 300.0    # deployment.go's and e2edeployment's pollLongTimeout
D_RETRY_PERIOD = 2.0         # dRetryPeriod
D_RETRY_TIMEOUT = 300.0      # dRetryTimeout

REVISION_ANNOTATION = "deployment.kubernetes.io/revision"  # deploymentutil.RevisionAnnotation
DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY = "pod-template-hash"  # appsv1.DefaultDeploymentUniqueLabelKey

TIMED_OUT = "timed out waiting for the condition"  # wait.ErrWaitTimeout (wait.PollImmediate)

# test/e2e/apps/types.go (v1.32) and the substitutions of the module doc.
WEBSERVER_IMAGE_NAME = "httpd"   # WebserverImageName
WEBSERVER_IMAGE = PAUSE_IMAGE    # WebserverImage = imageutils.GetE2EImage(imageutils.Httpd)
AGNHOST_IMAGE_NAME = "agnhost"   # AgnhostImageName
AGNHOST = AGNHOST_IMAGE          # AgnhostImage = imageutils.GetE2EImage(imageutils.Agnhost)


def _images_dir():
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(os.path.dirname(here), "tests", "harness"))
    import real_node  # noqa: E402  (the harness that builds the nodes' images)
    return real_node.images_dir()


_pause_id = []


def pause_image_id():
    """The image ID (config digest) of registry.k8s.io/pause:3.10 in the nodes' image
    archive (OCI layout: index.json -> manifest -> config)."""
    if not _pause_id:
        with tarfile.open(os.path.join(_images_dir(), "pause.tar")) as tar:
            index = json.load(tar.extractfile("index.json"))
            entry = next(m for m in index["manifests"]
                         if m.get("annotations", {}).get("io.containerd.image.name") == PAUSE_IMAGE)
            manifest = json.load(tar.extractfile(
                "blobs/sha256/" + entry["digest"].split(":", 1)[1]))
        _pause_id.append(manifest["config"]["digest"])
    return _pause_id[0]


# --------------------------------------------------------------------------- small Go bits


def wait_poll_immediate(interval, timeout, condition):
    """wait.PollImmediate: condition() returns (done, error text or None); an error ends the
    poll. Returns None, TIMED_OUT, or the condition's error."""
    deadline = time.monotonic() + timeout
    while True:
        done, err = condition()
        if err is not None:
            return err
        if done:
            return None
        if time.monotonic() + interval > deadline:
            return TIMED_OUT
        time.sleep(interval)


def wait_poll(interval, timeout, condition):
    """wait.PollWithContext / wait.Poll: as wait_poll_immediate, first check after one
    interval."""
    deadline = time.monotonic() + timeout
    while True:
        time.sleep(interval)
        done, err = condition()
        if err is not None:
            return err
        if done:
            return None
        if time.monotonic() + interval > deadline:
            return TIMED_OUT


def dump_pretty(obj):
    """dump.Pretty"""
    if hasattr(obj, "to_dict"):
        obj = client.ApiClient().sanitize_for_serialization(obj)
    return json.dumps(obj, indent=2, sort_keys=True, default=str)


def replicas_of(obj):
    """*obj.Spec.Replicas (a nil pointer fails the test, as a Go panic would)."""
    if obj.spec is None or obj.spec.replicas is None:
        fail("runtime error: invalid memory address or nil pointer dereference "
             "(%s.Spec.Replicas)", obj.metadata.name)
    return obj.spec.replicas


def status_int(obj, field):
    """An int32 status field (0 when unset, as Go's zero value)."""
    st = obj.status
    if st is None:
        return 0
    return getattr(st, field) or 0


def label_selector_as_selector_string(selector):
    """metav1.LabelSelectorAsSelector(selector).String(): requirements sorted by key."""
    if selector is None:
        return ""  # labels.Nothing() would be "" too for a nil selector (never here)
    reqs = []
    for k, v in (selector.match_labels or {}).items():
        reqs.append((k, "%s=%s" % (k, v)))
    for e in selector.match_expressions or []:
        op = e.operator
        vals = ",".join(sorted(e.values or []))
        if op == "In":
            reqs.append((e.key, "%s in (%s)" % (e.key, vals)))
        elif op == "NotIn":
            reqs.append((e.key, "%s notin (%s)" % (e.key, vals)))
        elif op == "Exists":
            reqs.append((e.key, e.key))
        elif op == "DoesNotExist":
            reqs.append((e.key, "!" + e.key))
    reqs.sort(key=lambda r: r[0])
    return ",".join(r[1] for r in reqs)


def get_controller_of(obj):
    """metav1.GetControllerOf"""
    for ref in obj.metadata.owner_references or []:
        if ref.controller:
            return ref
    return None


def is_controlled_by(obj, owner):
    """metav1.IsControlledBy"""
    ref = get_controller_of(obj)
    return ref is not None and ref.uid == owner.metadata.uid


def selector_has_label(selector, label_key):
    """labelsutil.SelectorHasLabel"""
    return bool(((selector.match_labels if selector is not None else None) or {}).get(label_key))


def get_scaled_value_from_int_or_percent(value, total, round_up):
    """intstr.GetScaledValueFromIntOrPercent: (value, error text or None)."""
    if value is None:
        return 0, "nil value for IntOrString"
    if isinstance(value, int):
        return value, None
    text = str(value)
    if not text.endswith("%"):
        try:
            return int(text), None
        except ValueError:
            return 0, "invalid value for IntOrString: invalid type: string is not a percentage"
    try:
        pct = int(text[:-1])
    except ValueError:
        return 0, "invalid value %r: %s" % (text, "not a percentage")
    if round_up:
        return int(math.ceil(pct * total / 100.0)), None
    return int(math.floor(pct * total / 100.0)), None


def _int_or_default(value):
    return 0 if value is None else value  # intstrutil.ValueOrDefault(v, FromInt32(0))


def resolve_fenceposts(max_surge, max_unavailable, desired):
    """deploymentutil.ResolveFenceposts"""
    surge, err = get_scaled_value_from_int_or_percent(_int_or_default(max_surge), desired, True)
    if err is not None:
        return 0, 0, err
    unavailable, err = get_scaled_value_from_int_or_percent(_int_or_default(max_unavailable),
                                                            desired, False)
    if err is not None:
        return 0, 0, err
    if surge == 0 and unavailable == 0:
        # Validation should never allow the user to explicitly use zero values for both
        # maxSurge maxUnavailable. Due to rounding down maxUnavailable though, it may
        # resolve to zero. If both fenceposts resolve to zero, then we should set
        # maxUnavailable to 1 on the grounds that surging is not possible.
        unavailable = 1
    return surge, unavailable, None


def is_rolling_update(deployment):
    """deploymentutil.IsRollingUpdate"""
    return deployment.spec.strategy is not None and deployment.spec.strategy.type == "RollingUpdate"


def _rolling(deployment):
    ru = deployment.spec.strategy.rolling_update
    if ru is None:
        fail("runtime error: invalid memory address or nil pointer dereference "
             "(Spec.Strategy.RollingUpdate)")
    return ru


def max_surge(deployment):
    """deploymentutil.MaxSurge"""
    if not is_rolling_update(deployment):
        return 0
    ru = _rolling(deployment)
    surge, _, _ = resolve_fenceposts(ru.max_surge, ru.max_unavailable, replicas_of(deployment))
    return surge


def max_unavailable(deployment):
    """deploymentutil.MaxUnavailable"""
    if not is_rolling_update(deployment) or replicas_of(deployment) == 0:
        return 0
    ru = _rolling(deployment)
    _, unavailable, _ = resolve_fenceposts(ru.max_surge, ru.max_unavailable,
                                           replicas_of(deployment))
    if unavailable > replicas_of(deployment):
        return replicas_of(deployment)
    return unavailable


def min_available(deployment):
    """deploymentutil.MinAvailable"""
    if not is_rolling_update(deployment):
        return 0
    return replicas_of(deployment) - max_unavailable(deployment)


def get_replica_count_for_replica_sets(replica_sets):
    """deploymentutil.GetReplicaCountForReplicaSets"""
    return sum(replicas_of(rs) for rs in replica_sets if rs is not None)


def deployment_complete(deployment, new_status):
    """deploymentutil.DeploymentComplete"""
    replicas = replicas_of(deployment)
    st = new_status or client.V1DeploymentStatus()
    return ((st.updated_replicas or 0) == replicas and (st.replicas or 0) == replicas and
            (st.available_replicas or 0) == replicas and
            (st.observed_generation or 0) >= (deployment.metadata.generation or 0))


def _creation_key(rs):
    ts = rs.metadata.creation_timestamp
    if ts is None:
        ts = datetime.datetime(1, 1, 1, tzinfo=datetime.timezone.utc)
    return (ts, rs.metadata.name)


def sort_by_creation_timestamp(rs_list):
    """sort.Sort(controller.ReplicaSetsByCreationTimestamp(rsList)) (in place)."""
    rs_list.sort(key=_creation_key)


def _template_without_hash(template):
    d = client.ApiClient().sanitize_for_serialization(template) or {}
    labels = dict((d.get("metadata") or {}).get("labels") or {})
    labels.pop(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY, None)
    d.setdefault("metadata", {})["labels"] = labels
    return d


def equal_ignore_hash(template1, template2):
    """deploymentutil.EqualIgnoreHash: Semantic.DeepEqual without the pod-template-hash
    label."""
    return semantic_equal(_template_without_hash(template1), _template_without_hash(template2))


def list_replica_sets(apps, deployment):
    """deploymentutil.ListReplicaSets(deployment, RsListFromClient(c.AppsV1())):
    (owned RSes, error text or None)."""
    selector = label_selector_as_selector_string(deployment.spec.selector)
    try:
        all_rs = apps.list_namespaced_replica_set(deployment.metadata.namespace,
                                                  label_selector=selector).items
    except ApiException as err:
        return None, describe_error(err)
    return [rs for rs in all_rs if is_controlled_by(rs, deployment)], None


def find_new_replica_set(deployment, rs_list):
    """deploymentutil.FindNewReplicaSet"""
    sort_by_creation_timestamp(rs_list)
    for rs in rs_list:
        if equal_ignore_hash(rs.spec.template, deployment.spec.template):
            # In rare cases, such as after cluster upgrades, Deployment may end up with
            # having more than one new ReplicaSets that have the same template as its
            # template, see https://github.com/kubernetes/kubernetes/issues/40415
            # We deterministically choose the oldest new ReplicaSet.
            return rs
    # new ReplicaSet does not exist.
    return None


def find_old_replica_sets(deployment, rs_list):
    """deploymentutil.FindOldReplicaSets: (required RSs, all old RSs)."""
    required, all_rss = [], []
    new_rs = find_new_replica_set(deployment, rs_list)
    for rs in rs_list:
        # Filter out new replica set
        if new_rs is not None and rs.metadata.uid == new_rs.metadata.uid:
            continue
        all_rss.append(rs)
        if replicas_of(rs) != 0:
            required.append(rs)
    return required, all_rss


def list_pods(core, deployment, rs_list):
    """deploymentutil.ListPods: (pods owned by rs_list, error text or None)."""
    selector = label_selector_as_selector_string(deployment.spec.selector)
    try:
        all_pods = core.list_namespaced_pod(deployment.metadata.namespace,
                                            label_selector=selector).items
    except ApiException as err:
        return None, describe_error(err)
    uids = {rs.metadata.uid for rs in rs_list if rs is not None}
    owned = []
    for pod in all_pods:
        ref = get_controller_of(pod)
        if ref is not None and ref.uid in uids:
            owned.append(pod)
    return owned, None


# --------------------------------------------------------------------------- test/utils


def get_all_replica_sets(apps, deployment):
    """testutil.GetAllReplicaSets: (oldRSes, allOldRSes, newRS, error text or None)."""
    rs_list, err = list_replica_sets(apps, deployment)
    if err is not None:
        return None, None, None, err
    old, all_old = find_old_replica_sets(deployment, rs_list)
    new_rs = find_new_replica_set(deployment, rs_list)
    return old, all_old, new_rs, None


def get_old_replica_sets(apps, deployment):
    """testutil.GetOldReplicaSets: (oldRSes, allOldRSes, error text or None)."""
    rs_list, err = list_replica_sets(apps, deployment)
    if err is not None:
        return None, None, err
    old, all_old = find_old_replica_sets(deployment, rs_list)
    return old, all_old, None


def get_new_replica_set(apps, deployment):
    """testutil.GetNewReplicaSet: (newRS or None, error text or None)."""
    rs_list, err = list_replica_sets(apps, deployment)
    if err is not None:
        return None, err
    return find_new_replica_set(deployment, rs_list), None


def log_replica_sets_of_deployment(deployment, all_old_rss, new_rs):
    """testutil.LogReplicaSetsOfDeployment"""
    if new_rs is not None:
        logf("New ReplicaSet %r of Deployment %r:\n%s", new_rs.metadata.name,
             deployment.metadata.name, dump_pretty(new_rs))
    else:
        logf("New ReplicaSet of Deployment %r is nil.", deployment.metadata.name)
    if all_old_rss:
        logf("All old ReplicaSets of Deployment %r:", deployment.metadata.name)
    for rs in all_old_rss or []:
        logf("%s", dump_pretty(rs))


def _is_pod_available(pod, min_ready_seconds, now):
    """podutil.IsPodAvailable"""
    conds = (pod.status.conditions if pod.status is not None else None) or []
    ready = next((c for c in conds if c.type == "Ready"), None)
    if ready is None or ready.status != "True":
        return False
    if min_ready_seconds == 0:
        return True
    t = ready.last_transition_time
    return t is not None and t + datetime.timedelta(seconds=min_ready_seconds) < now


def log_pods_of_deployment(core, deployment, rs_list):
    """testutil.LogPodsOfDeployment"""
    min_ready_seconds = deployment.spec.min_ready_seconds or 0
    pods, err = list_pods(core, deployment, rs_list)
    if err is not None:
        logf("Failed to list Pods of Deployment %r: %s", deployment.metadata.name, err)
        return
    now = datetime.datetime.now(datetime.timezone.utc)
    for pod in pods:
        availability = "not available"
        if _is_pod_available(pod, min_ready_seconds, now):
            availability = "available"
        logf("Pod %r is %s:\n%s", pod.metadata.name, availability, dump_pretty(pod))


def _status_repr(st):
    return json.dumps(client.ApiClient().sanitize_for_serialization(st), sort_keys=True)


def check_rolling_update_status(apps, core, deployment):
    """checkRollingUpdateStatus: (reason, error text or None)."""
    old_rss, all_old_rss, new_rs, err = get_all_replica_sets(apps, deployment)
    if err is not None:
        return "", err
    if new_rs is None:
        # New RC hasn't been created yet.
        return "new replica set hasn't been created yet", None
    all_rss = old_rss + [new_rs]
    # The old/new ReplicaSets need to contain the pod-template-hash label
    for rs in all_rss:
        if not selector_has_label(rs.spec.selector, DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY):
            return "all replica sets need to contain the pod-template-hash label", None
    # Check max surge and min available
    total_created = get_replica_count_for_replica_sets(all_rss)
    max_created = replicas_of(deployment) + max_surge(deployment)
    if total_created > max_created:
        log_replica_sets_of_deployment(deployment, all_old_rss, new_rs)
        log_pods_of_deployment(core, deployment, all_rss)
        return "", "total pods created: %d, more than the max allowed: %d" % (total_created,
                                                                            max_created)
    minimum = min_available(deployment)
    if status_int(deployment, "available_replicas") < minimum:
        log_replica_sets_of_deployment(deployment, all_old_rss, new_rs)
        log_pods_of_deployment(core, deployment, all_rss)
        return "", "total pods available: %d, less than the min required: %d" % (
            status_int(deployment, "available_replicas"), minimum)
    return "", None


def _wait_for_deployment_complete_maybe_check_rolling(apps, core, d, rolling, poll_interval,
                                                      poll_timeout):
    """waitForDeploymentCompleteMaybeCheckRolling"""
    state = {"reason": ""}

    def condition():
        try:
            deployment = apps.read_namespaced_deployment(d.metadata.name, d.metadata.namespace)
        except ApiException as err:
            return False, describe_error(err)
        # If during a rolling update, make sure rolling update strategy isn't broken at any
        # times.
        if rolling:
            reason, err = check_rolling_update_status(apps, core, deployment)
            if err is not None:
                return False, err
            state["reason"] = reason
            logf("%s", reason)
        # When the deployment status and its underlying resources reach the desired state,
        # we're done
        if deployment_complete(d, deployment.status):
            return True, None
        state["reason"] = "deployment status: %s" % _status_repr(deployment.status)
        logf("%s", state["reason"])
        return False, None

    err = wait_poll_immediate(poll_interval, poll_timeout, condition)
    if err == TIMED_OUT:
        err = state["reason"]
    if err is not None:
        return "error waiting for deployment %r status to match expectation: %s" % (
            d.metadata.name, err)
    return None


def wait_for_deployment_complete(apps, core, d):
    """e2edeployment.WaitForDeploymentComplete (poll, pollLongTimeout)"""
    return _wait_for_deployment_complete_maybe_check_rolling(apps, core, d, False, POLL,
                                                             POLL_LONG_TIMEOUT)


def wait_for_deployment_complete_and_check_rolling(apps, core, d):
    """testutil.WaitForDeploymentCompleteAndCheckRolling(c, d, Logf, poll, pollLongTimeout)"""
    return _wait_for_deployment_complete_maybe_check_rolling(apps, core, d, True, POLL,
                                                             POLL_LONG_TIMEOUT)


def _contains_image(containers, image):
    return any(c.image == image for c in containers or [])


def _annotation(obj, key):
    return (obj.metadata.annotations or {}).get(key)


def check_revision_and_image(deployment, new_rs, revision, image):
    """checkRevisionAndImage: None or the error text."""
    # The new ReplicaSet needs to be non-nil and contain the pod-template-hash label
    if new_rs is None:
        return "new replicaset for deployment %r is yet to be created" % deployment.metadata.name
    if not selector_has_label(new_rs.spec.selector, DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY):
        return "new replica set %r doesn't have %r label selector" % (
            new_rs.metadata.name, DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY)
    # Check revision of this deployment, and of the new replica set of this deployment
    if _annotation(deployment, REVISION_ANNOTATION) != revision:
        return "deployment %r doesn't have the required revision set" % deployment.metadata.name
    if _annotation(new_rs, REVISION_ANNOTATION) != revision:
        return "new replicaset %r doesn't have the required revision set" % new_rs.metadata.name
    # Check the image of this deployment, and of the new replica set of this deployment
    if not _contains_image(deployment.spec.template.spec.containers, image):
        return "deployment %r doesn't have the required image %s set" % (
            deployment.metadata.name, image)
    if not _contains_image(new_rs.spec.template.spec.containers, image):
        return "new replica set %r doesn't have the required image %s." % (
            new_rs.metadata.name, image)
    return None


def wait_for_deployment_revision_and_image(apps, ns, deployment_name, revision, image):
    """e2edeployment.WaitForDeploymentRevisionAndImage (testutil's, poll,
    pollLongTimeout): None or the error text."""
    state = {"deployment": None, "new_rs": None, "reason": ""}

    def condition():
        try:
            state["deployment"] = apps.read_namespaced_deployment(deployment_name, ns)
        except ApiException as err:
            return False, describe_error(err)
        # The new ReplicaSet needs to be non-nil and contain the pod-template-hash label
        new_rs, err = get_new_replica_set(apps, state["deployment"])
        state["new_rs"] = new_rs
        if err is not None:
            return False, err
        err = check_revision_and_image(state["deployment"], new_rs, revision, image)
        if err is not None:
            state["reason"] = err
            logf("%s", err)
            return False, None
        return True, None

    err = wait_poll_immediate(POLL, POLL_LONG_TIMEOUT, condition)
    deployment, new_rs = state["deployment"], state["new_rs"]
    if err == TIMED_OUT:
        log_replica_sets_of_deployment(deployment, None, new_rs)
        err = state["reason"]
    if new_rs is None:
        return "deployment %r failed to create new replica set" % deployment_name
    if err is not None:
        if deployment is None:
            return "error creating new replica set for deployment %r: %s" % (deployment_name,
                                                                             err)
        containers = deployment.spec.template.spec.containers or []
        deployment_image = containers[0].image if containers else ""
        rs_containers = new_rs.spec.template.spec.containers or []
        new_rs_image = rs_containers[0].image if rs_containers else ""
        return ("error waiting for deployment %r (got %s / %s) and new replica set %r (got %s "
                "/ %s) revision and image to match expectation (expected %s / %s): %s" % (
                    deployment_name, _annotation(deployment, REVISION_ANNOTATION) or "",
                    deployment_image, new_rs.metadata.name,
                    _annotation(new_rs, REVISION_ANNOTATION) or "", new_rs_image, revision,
                    image, err))
    return None


def check_deployment_revision_and_image(apps, ns, deployment_name, revision, image):
    """testutil.CheckDeploymentRevisionAndImage: None or the error text."""
    try:
        deployment = apps.read_namespaced_deployment(deployment_name, ns)
    except ApiException as err:
        return "unable to get deployment %s during revision check: %s" % (deployment_name,
                                                                          describe_error(err))
    # Check revision of the new replica set of this deployment
    new_rs, err = get_new_replica_set(apps, deployment)
    if err is not None:
        return "unable to get new replicaset of deployment %s during revision check: %s" % (
            deployment_name, err)
    return check_revision_and_image(deployment, new_rs, revision, image)


def update_deployment_with_retries(apps, namespace, name, apply_update):
    """e2edeployment.UpdateDeploymentWithRetries (testutil's, poll, pollShortTimeout):
    (deployment, error text or None)."""
    state = {"deployment": None, "update_err": None}

    def condition():
        try:
            deployment = apps.read_namespaced_deployment(name, namespace)
        except ApiException as err:
            state["deployment"] = None
            return False, describe_error(err)
        # Apply the update, then attempt to push it to the apiserver.
        apply_update(deployment)
        try:
            state["deployment"] = apps.replace_namespaced_deployment(name, namespace, deployment)
        except ApiException as err:
            state["deployment"] = None
            state["update_err"] = describe_error(err)
            return False, None
        logf("Updating deployment %s", name)
        return True, None

    err = wait_poll_immediate(POLL, POLL_SHORT_TIMEOUT, condition)
    if err == TIMED_OUT:
        err = "couldn't apply the provided updated to deployment %r: %s" % (name,
                                                                           state["update_err"])
    return state["deployment"], err


def wait_for_observed_deployment(apps, ns, deployment_name, desired_generation):
    """testutil.WaitForObservedDeployment -> deploymentutil.WaitForObservedDeployment
    (2 s, 1 min): None or the error text."""

    def condition():
        try:
            deployment = apps.read_namespaced_deployment(deployment_name, ns)
        except ApiException as err:
            return False, describe_error(err)
        return status_int(deployment, "observed_generation") >= desired_generation, None

    return wait_poll_immediate(2.0, 60.0, condition)


def wait_for_deployment_updated_replicas_gte(apps, ns, deployment_name, min_updated_replicas,
                                             desired_generation):
    """testutil.WaitForDeploymentUpdatedReplicasGTE(..., poll, pollLongTimeout)"""
    state = {"deployment": None}

    def condition():
        try:
            d = apps.read_namespaced_deployment(deployment_name, ns)
        except ApiException as err:
            return False, describe_error(err)
        state["deployment"] = d
        return (status_int(d, "observed_generation") >= desired_generation and
                status_int(d, "updated_replicas") >= min_updated_replicas), None

    err = wait_poll_immediate(POLL, POLL_LONG_TIMEOUT, condition)
    if err is not None:
        d = state["deployment"]
        if d is None:
            fail("runtime error: invalid memory address or nil pointer dereference "
                 "(deployment.Status after %s)", err)
        return ("error waiting for deployment %r to have at least %d updatedReplicas: %s; "
                "latest .status.updatedReplicas: %d" % (deployment_name, min_updated_replicas,
                                                        err, status_int(d, "updated_replicas")))
    return None


# --------------------------------------------------------------------------- e2ereplicaset


def wait_for_ready_replica_set(apps, ns, name):
    """e2ereplicaset.WaitForReadyReplicaSet: wait.PollWithContext(Poll, PodStartTimeout)."""

    def condition():
        try:
            rs = apps.read_namespaced_replica_set(name, ns)
        except ApiException as err:
            return False, describe_error(err)
        return (replicas_of(rs) == status_int(rs, "replicas") and
                replicas_of(rs) == status_int(rs, "ready_replicas")), None

    err = wait_poll(POLL, POD_START_TIMEOUT, condition)
    if err == TIMED_OUT:
        err = "replicaset %r never became ready" % name
    return err


def wait_for_replica_set_target_available_replicas(apps, replica_set, target_replica_num):
    """e2ereplicaset.WaitForReplicaSetTargetAvailableReplicas (PodStartTimeout)"""
    desired_generation = replica_set.metadata.generation or 0

    def condition():
        try:
            rs = apps.read_namespaced_replica_set(replica_set.metadata.name,
                                                  replica_set.metadata.namespace)
        except ApiException as err:
            return False, describe_error(err)
        return (status_int(rs, "observed_generation") >= desired_generation and
                status_int(rs, "available_replicas") == target_replica_num), None

    err = wait_poll_immediate(POLL, POD_START_TIMEOUT, condition)
    if err == TIMED_OUT:
        err = ("replicaset %r never had desired number of .status.availableReplicas"
               % replica_set.metadata.name)
    return err


# --------------------------------------------------------------------------- apps tests


def new_rs(rs_name, replicas, rs_pod_labels, image_name, image, args):
    """newRS (test/e2e/apps/replica_set.go)"""
    return client.V1ReplicaSet(
        metadata=client.V1ObjectMeta(name=rs_name, labels=rs_pod_labels),
        spec=client.V1ReplicaSetSpec(
            selector=client.V1LabelSelector(match_labels=rs_pod_labels),
            replicas=replicas,
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=rs_pod_labels),
                spec=client.V1PodSpec(
                    termination_grace_period_seconds=0,
                    containers=[client.V1Container(name=image_name, image=image,
                                                   args=args)]))))


def failure_trap(apps, core, ns):
    """failureTrap (the Deployment Describe's AfterEach): logs every Deployment of the
    namespace with its ReplicaSets and pods, or every ReplicaSet and its pods when there is
    no Deployment."""
    try:
        deployments = apps.list_namespaced_deployment(ns, label_selector="")
    except ApiException as err:
        logf("Could not list Deployments in namespace %r: %s", ns, describe_error(err))
        return
    for d in deployments.items:
        logf("Deployment %r:\n%s\n", d.metadata.name, dump_pretty(d))
        _, all_old_rss, new_rs_obj, err = get_all_replica_sets(apps, d)
        if err is not None:
            logf("Could not list ReplicaSets for Deployment %r: %s", d.metadata.name, err)
            return
        log_replica_sets_of_deployment(d, all_old_rss, new_rs_obj)
        rs_list = list(all_old_rss)
        if new_rs_obj is not None:
            rs_list.append(new_rs_obj)
        log_pods_of_deployment(core, d, rs_list)
    # We need print all the ReplicaSets if there are no Deployment object created
    if deployments.items:
        return
    logf("Log out all the ReplicaSets if there is no deployment created")
    try:
        rss = apps.list_namespaced_replica_set(ns, label_selector="")
    except ApiException as err:
        logf("Could not list ReplicaSets in namespace %r: %s", ns, describe_error(err))
        return
    for rs in rss.items:
        logf("ReplicaSet %r:\n%s\n", rs.metadata.name, dump_pretty(rs))
        selector = label_selector_as_selector_string(rs.spec.selector)
        try:
            pod_list = core.list_namespaced_pod(rs.metadata.namespace, label_selector=selector)
        except ApiException as err:
            logf("Failed to list Pods in namespace %s: %s", rs.metadata.namespace,
                 describe_error(err))
            continue
        for pod in pod_list.items:
            logf("pod: %r:\n%s\n", pod.metadata.name, dump_pretty(pod))


class GoroutineFailure:
    """A framework.Failf inside a goroutine with GinkgoRecover: the failure is recorded and
    fails the spec (checked by the test body at its end, and before each later step that
    calls check())."""

    def __init__(self):
        self._lock = threading.Lock()
        self.message = None

    def failf(self, msg, *args):
        with self._lock:
            if self.message is None:
                self.message = msg % args if args else msg

    def check(self):
        if self.message is not None:
            fail("%s", self.message)


# --------------------------------------------------------------------------- node labels
# test/e2e/framework/node/helper.go (AddOrUpdateLabelOnNode, ExpectNodeHasLabel,
# RemoveLabelOffNode) over test/utils (AddLabelsToNode, RemoveLabelOffNode,
# VerifyLabelsRemoved; retries = 5, 100 ms apart, conflicts retried).

_NODE_RETRIES = 5


def _add_labels_to_node(cs, node_name, labels):
    """testutils.AddLabelsToNode: a merge patch of metadata.labels. None or error text."""
    tokens = ['"%s":"%s"' % (k, v) for k, v in labels.items()]
    patch = '{"metadata":{"labels":{%s}}}' % ",".join(tokens)
    err = None
    for _ in range(_NODE_RETRIES):
        try:
            cs.api_client.call_api(
                "/api/v1/nodes/{name}", "PATCH", path_params={"name": node_name},
                header_params={"Content-Type": "application/merge-patch+json",
                               "Accept": "application/json"},
                body=json.loads(patch), response_type="V1Node", auth_settings=["BearerToken"],
                _return_http_data_only=True)
            return None
        except ApiException as e:
            err = e
            if e.status != 409:
                return describe_error(e)
        time.sleep(0.1)
    return describe_error(err)


def _remove_label_off_node(cs, node_name, label_keys):
    """testutils.RemoveLabelOffNode: won't fail if target label doesn't exist or has been
    removed. None or error text."""
    err = None
    for _ in range(_NODE_RETRIES):
        try:
            node = cs.read_node(node_name)
        except ApiException as e:
            return describe_error(e)
        if node.metadata.labels is None:
            return None
        for label_key in label_keys:
            if not node.metadata.labels or not node.metadata.labels.get(label_key):
                break
            del node.metadata.labels[label_key]
        try:
            cs.replace_node(node_name, node)
            return None
        except ApiException as e:
            err = e
            if e.status != 409:
                return describe_error(e)
            logf("Conflict when trying to remove a labels %s from %s", label_keys, node_name)
        time.sleep(0.1)
    return describe_error(err)


def _verify_labels_removed(cs, node_name, label_keys):
    """testutils.VerifyLabelsRemoved"""
    try:
        node = cs.read_node(node_name)
    except ApiException as e:
        return describe_error(e)
    for label_key in label_keys:
        if (node.metadata.labels or {}).get(label_key):
            return "Failed removing label " + label_key + " of the node " + node_name
    return None


def add_or_update_label_on_node(cs, node_name, label_key, label_value):
    """e2enode.AddOrUpdateLabelOnNode"""
    err = _add_labels_to_node(cs, node_name, {label_key: label_value})
    if err is not None:
        fail("unexpected error: %s", err)


def expect_node_has_label(cs, node_name, label_key, label_value):
    """e2enode.ExpectNodeHasLabel"""
    by("verifying the node has the label " + label_key + " " + label_value)
    try:
        node = cs.read_node(node_name)
    except ApiException as e:
        fail("unexpected error: %s", describe_error(e))
    labels = node.metadata.labels or {}
    if labels.get(label_key) != label_value or label_key not in labels:
        fail("Expected\n    %s\nto have {key: value}\n    %s", labels, {label_key: label_value})


def remove_label_off_node(cs, node_name, label_key):
    """e2enode.RemoveLabelOffNode"""
    by("removing the label " + label_key + " off the node " + node_name)
    err = _remove_label_off_node(cs, node_name, [label_key])
    if err is not None:
        fail("unexpected error: %s", err)
    by("verifying the node doesn't have the label " + label_key)
    err = _verify_labels_removed(cs, node_name, [label_key])
    if err is not None:
        fail("unexpected error: %s", err)
