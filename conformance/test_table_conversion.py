"""Port of test/e2e/apimachinery/table_conversion.go (kubernetes/kubernetes), the
[Conformance] test "should return a 406 for a backend which does not implement metadata"."""

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import conformance, fail, raw_call

# Behaviour that depends on the store: scripts/test.sh runs this module again with the
# API server on etcd.
pytestmark = pytest.mark.storage


@conformance("[sig-api-machinery] Servers with support for Table transformation should return "
             "a 406 for a backend which does not implement metadata [Conformance]")
def test_table_406_for_backend_without_metadata(new_framework):
    f = new_framework("tables")

    sar = client.V1SelfSubjectAccessReview(
        api_version="authorization.k8s.io/v1", kind="SelfSubjectAccessReview",
        spec=client.V1SelfSubjectAccessReviewSpec(
            non_resource_attributes=client.V1NonResourceAttributes(path="/", verb="get")))
    # c.AuthorizationV1().RESTClient().Post().Resource("selfsubjectaccessreviews")
    #   .SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Body(sar)
    err = None
    try:
        table = raw_call(f.api_client, "POST",
                         "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body=sar,
                         headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    except ApiException as e:
        err = e
    if err is not None:
        if err.status != 406:
            fail("expected the error's Status().Code to equal 406, got %s: %s", err.status,
                 (err.body or "")[:400])
        return
    fail("failed to return error when posting self subject access review: %r, to a backend "
         "that does not implement metadata (got %r)", sar, table)
