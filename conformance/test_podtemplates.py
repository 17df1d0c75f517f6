"""Port of test/e2e/common/node/podtemplates.go (kubernetes/kubernetes), the [Conformance]
test "should run the lifecycle of PodTemplates"."""

import pytest
from kubernetes import client

from e2e_framework import (compare_resource_version, conformance, expect_no_error,
                           expect_valid_resource_version, new_uuid)

# Behaviour that depends on the store: scripts/test.sh runs this module again with the
# API server on etcd.
pytestmark = pytest.mark.storage

# imageutils.GetE2EImage(imageutils.Nginx); no pod is run from a template.
NGINX_IMAGE = "registry.k8s.io/e2e-test-images/nginx:1.14-4"


@conformance("[sig-node] PodTemplates should run the lifecycle of PodTemplates [Conformance]")
def test_podtemplates_lifecycle(new_framework):
    f = new_framework("podtemplate", "privileged")
    test_namespace_name = f.namespace.metadata.name
    pod_template_name = "nginx-pod-template-" + new_uuid()

    # get a list of PodTemplates (in all namespaces to hit endpoint)
    pod_template_list = expect_no_error(f.core.list_pod_template_for_all_namespaces,
                                        label_selector="podtemplate-static=true",
                                        explain="failed to list all PodTemplates")
    assert not pod_template_list.items, "unable to find templates"

    # create a PodTemplate
    expect_no_error(
        f.core.create_namespaced_pod_template, test_namespace_name,
        client.V1PodTemplate(
            metadata=client.V1ObjectMeta(name=pod_template_name,
                                         labels={"podtemplate-static": "true"}),
            template=client.V1PodTemplateSpec(spec=client.V1PodSpec(
                containers=[client.V1Container(name="nginx", image=NGINX_IMAGE)]))),
        explain="failed to create PodTemplate")

    # get template
    pod_template_read = expect_no_error(f.core.read_namespaced_pod_template, pod_template_name,
                                        test_namespace_name,
                                        explain="failed to get created PodTemplate")
    assert pod_template_read.metadata.name == pod_template_name
    expect_valid_resource_version(pod_template_read)

    # patch template
    pod_template_patch = {"metadata": {"labels": {"podtemplate": "patched"}}}
    patched_pod_template = expect_no_error(
        f.core.patch_namespaced_pod_template, pod_template_name, test_namespace_name,
        pod_template_patch, explain="failed to patch PodTemplate")  # strategic merge patch
    assert compare_resource_version(pod_template_read.metadata.resource_version,
                                    patched_pod_template.metadata.resource_version) == -1, \
        "patched object should have a larger resource version"

    # get template (ensure label is there)
    pod_template_read = expect_no_error(f.core.read_namespaced_pod_template, pod_template_name,
                                        test_namespace_name,
                                        explain="failed to get PodTemplate")
    assert (pod_template_read.metadata.labels or {}).get("podtemplate") == "patched", \
        "failed to patch template, new label not found"

    # delete the PodTemplate
    expect_no_error(f.core.delete_namespaced_pod_template, pod_template_name,
                    test_namespace_name, explain="failed to delete PodTemplate")

    # list the PodTemplates
    pod_template_list = expect_no_error(f.core.list_pod_template_for_all_namespaces,
                                        label_selector="podtemplate-static=true",
                                        explain="failed to list PodTemplate")
    assert not pod_template_list.items, \
        "PodTemplate list returned items, failed to delete PodTemplate"
