"""What GKE's internal Gateway needs outside the cluster: a proxy-only subnet, a reserved address,
and a certificate that needs no manual step.

* **Proxy-only subnet.**  ``gke-l7-rilb`` is an Envoy-based regional load balancer; its region and
  VPC need one ``REGIONAL_MANAGED_PROXY`` subnet, role ``ACTIVE`` (GKE docs
  how-to/deploying-gateways, "GKE Gateway controller requirements": "If you are using a regional
  or cross-regional GatewayClass, you must enable a proxy-only subnet"; Cloud Load Balancing docs
  proxy-only-subnets: at most one active per region and VPC, /26 or larger).  The proxies connect
  to the pods from addresses of that subnet, so its range is also what the NetworkPolicies allow
  (:mod:`components.tenant_network`).  Where the network's owner already runs one, the stack only
  takes its range (``createProxySubnet: false``).
* **Address.**  A regional internal ``gcp.compute.Address`` (purpose ``SHARED_LOADBALANCER_VIP``,
  terraform-provider-google ``google_compute_address``) in the cluster's subnetwork, named in the
  Gateway's ``spec.addresses`` (``NamedAddress``), so the DNS record can exist before the Gateway.
* **Certificate (why Certificate Manager, not a TLS Secret).**  A Secret would have to be created
  by hand before the Gateway serves, and the stack cannot see from here whether it exists.  A
  Google-managed regional certificate for ``*.<domain>`` with a DNS authorization
  (``gcp.certificatemanager.DnsAuthorization`` + ``Certificate``, location = the cluster's region;
  terraform-provider-google ``google_certificate_manager_certificate``, "regional managed certs")
  is issued and renewed by Google once the authorization's CNAME record exists, and the stack
  writes that record itself in the configured Cloud DNS zone, with a wildcard ``A`` record for the
  teams' hosts.  One wildcard certificate: adding or reordering teams never touches it.
* **APIs.**  Certificate Manager and Cloud DNS are not on in a new project (Service Usage docs,
  "Default services"); the stack turns on ``certificatemanager.googleapis.com`` and
  ``dns.googleapis.com`` (terraform-provider-google-beta v7.45.0 ``*_meta.yaml``
  ``api_service_name`` of ``google_certificate_manager_*`` and ``google_dns_record_set``) before
  the resources that call them (issue 39).
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components import service_apis

PROXY_PURPOSE = "REGIONAL_MANAGED_PROXY"
ADDRESS_PURPOSE = "SHARED_LOADBALANCER_VIP"
DNS_TTL_SECONDS = 300
APIS = ("certificatemanager.googleapis.com", "dns.googleapis.com")


@dataclass(frozen=True)
class GatewayCloudArgs:
    project: str
    region: str
    network: str
    subnetwork: str
    domain: str
    dns_zone: str
    proxy_subnet_range: str
    create_proxy_subnet: bool
    # Prefix of the Google resource names (the cluster's name): one set per cluster.
    prefix: str


@dataclass(frozen=True)
class GatewayCloud:
    address_name: str
    certificate_name: str
    proxy_subnet: gcp.compute.Subnetwork | None
    resources: tuple[pulumi.Resource, ...]


def create(name: str, args: GatewayCloudArgs, parent: pulumi.Resource) -> GatewayCloud:
    """Register the subnet (when asked), address, certificate and DNS records."""
    child = pulumi.ResourceOptions(parent=parent)
    subnet = (
        gcp.compute.Subnetwork(
            f"{name}-proxy-subnet",
            name=f"{args.prefix}-proxy-only",
            project=args.project,
            region=args.region,
            network=args.network,
            ip_cidr_range=args.proxy_subnet_range,
            purpose=PROXY_PURPOSE,
            role="ACTIVE",
            opts=child,
        )
        if args.create_proxy_subnet
        else None
    )
    address_name = f"{args.prefix}-skypilot-gateway"
    address = gcp.compute.Address(
        f"{name}-address",
        name=address_name,
        project=args.project,
        region=args.region,
        subnetwork=args.subnetwork,
        address_type="INTERNAL",
        purpose=ADDRESS_PURPOSE,
        opts=child,
    )
    apis = service_apis.enable(f"{name}-api", args.project, APIS, child)
    after_apis = child.merge(pulumi.ResourceOptions(depends_on=list(apis)))
    authorization = gcp.certificatemanager.DnsAuthorization(
        f"{name}-dns-authorization",
        name=f"{args.prefix}-skypilot",
        project=args.project,
        location=args.region,
        domain=args.domain,
        opts=after_apis,
    )
    record = authorization.dns_resource_records[0]
    validation = gcp.dns.RecordSet(
        f"{name}-dns-authorization-record",
        project=args.project,
        managed_zone=args.dns_zone,
        name=record.name,
        type=record.type,
        ttl=DNS_TTL_SECONDS,
        rrdatas=[record.data],
        opts=after_apis,
    )
    certificate_name = f"{args.prefix}-skypilot"
    certificate = gcp.certificatemanager.Certificate(
        f"{name}-certificate",
        name=certificate_name,
        project=args.project,
        location=args.region,
        managed=gcp.certificatemanager.CertificateManagedArgs(
            domains=[f"*.{args.domain}"], dns_authorizations=[authorization.id]
        ),
        opts=after_apis.merge(pulumi.ResourceOptions(depends_on=[validation])),
    )
    hosts = gcp.dns.RecordSet(
        f"{name}-hosts-record",
        project=args.project,
        managed_zone=args.dns_zone,
        name=f"*.{args.domain}.",
        type="A",
        ttl=DNS_TTL_SECONDS,
        rrdatas=[address.address],
        opts=after_apis,
    )
    made: list[pulumi.Resource] = [*apis, address, authorization, validation, certificate, hosts]
    if subnet is not None:
        made.insert(0, subnet)
    return GatewayCloud(address_name, certificate_name, subnet, tuple(made))
