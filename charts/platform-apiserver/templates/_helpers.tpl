{{/* Chart name, overridable. */}}
{{- define "platform-apiserver.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Base name of every object. The release name itself, so the Service — and with it the in-cluster URL
http://<release>.<namespace>.svc — is named after the release.
*/}}
{{- define "platform-apiserver.fullname" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "platform-apiserver.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "platform-apiserver.selectorLabels" -}}
app.kubernetes.io/name: {{ include "platform-apiserver.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "platform-apiserver.labels" -}}
helm.sh/chart: {{ include "platform-apiserver.chart" . }}
{{ include "platform-apiserver.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/component: apiserver
app.kubernetes.io/part-of: {{ .Values.config.platformName | default "platform" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The image reference: by digest when one is given (immutable), else by tag. */}}
{{- define "platform-apiserver.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/* The Secret holding the OAuth clients, or empty when the server keeps its default client. */}}
{{- define "platform-apiserver.oauthClientsSecret" -}}
{{- if .Values.oauth.existingSecret }}{{ .Values.oauth.existingSecret }}
{{- else if .Values.oauth.clients }}{{ printf "%s-oauth-clients" (include "platform-apiserver.fullname" .) }}
{{- end }}
{{- end }}

{{/* Key of the clients inside that Secret. */}}
{{- define "platform-apiserver.oauthClientsKey" -}}
{{- if .Values.oauth.existingSecret }}{{ .Values.oauth.key }}{{ else }}clients{{ end }}
{{- end }}

{{- define "platform-apiserver.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "platform-apiserver.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Cluster-scoped objects carry the namespace too: two releases of the same name must not collide. */}}
{{- define "platform-apiserver.clusterRoleName" -}}
{{- printf "%s-%s" (include "platform-apiserver.fullname" .) .Release.Namespace }}
{{- end }}

{{- define "platform-apiserver.signingKeysSecret" -}}
{{- default (printf "%s-signing-keys" (include "platform-apiserver.fullname" .)) .Values.signingKeys.existingSecret }}
{{- end }}

{{/* File name of the signing key inside the keys Secret. */}}
{{- define "platform-apiserver.signingKeyName" -}}
{{- if .Values.signingKeys.existingSecret }}{{ .Values.signingKeys.key }}{{ else }}signing-key.pem{{ end }}
{{- end }}

{{- define "platform-apiserver.adminSecret" -}}
{{- default (printf "%s-admin" (include "platform-apiserver.fullname" .)) .Values.admin.existingSecret }}
{{- end }}

{{- define "platform-apiserver.adminPasswordKey" -}}
{{- if .Values.admin.existingSecret }}{{ .Values.admin.passwordKey }}{{ else }}password{{ end }}
{{- end }}

{{/* API group of the server's own custom resources: it follows the platform name. */}}
{{- define "platform-apiserver.iamGroup" -}}
{{- printf "iam.%s.io" (.Values.config.platformName | default "platform") }}
{{- end }}

{{/* API group of the original's tenant resources (workspaces), read by the tenant API. */}}
{{- define "platform-apiserver.tenantGroup" -}}
{{- printf "tenant.%s.io" (.Values.config.platformName | default "platform") }}
{{- end }}

{{/* The leader Lease's name: config.leaderElection.leaseName, else <platformName>-apiserver (as the server defaults it). */}}
{{- define "platform-apiserver.leaseName" -}}
{{- $election := .Values.config.leaderElection | default dict }}
{{- $election.leaseName | default (printf "%s-apiserver" (.Values.config.platformName | default "platform")) }}
{{- end }}

{{/* {base_url}: the explicit value, else the first Ingress host (https when it has TLS), else empty. */}}
{{- define "platform-apiserver.externalBaseUrl" -}}
{{- if .Values.externalBaseUrl }}
{{- .Values.externalBaseUrl | trimSuffix "/" }}
{{- else if and .Values.ingress.enabled .Values.ingress.hosts }}
{{- $host := (first .Values.ingress.hosts).host }}
{{- $tls := false }}
{{- range .Values.ingress.tls }}{{ if has $host .hosts }}{{ $tls = true }}{{ end }}{{ end }}
{{- printf "%s://%s" (ternary "https" "http" $tls) $host }}
{{- end }}
{{- end }}

{{/*
The server's config file: the user's `config` with the chart-owned keys set (listen address and port,
the leader Lease's namespace (the release's: the chart grants the Lease there),
the serving certificate when `tls.secretName` is set,
the signing and verification key files, the first administrator, the external base URL when known, and
the log store's CA file when its Secret is named).
*/}}
{{- define "platform-apiserver.config" -}}
{{- $config := deepCopy .Values.config }}
{{- $http := get $config "http" | default dict }}
{{- $_ := set $http "host" "0.0.0.0" }}
{{- $_ := set $http "port" (int .Values.containerPort) }}
{{- if .Values.tls.secretName }}
{{- $_ := set $http "tlsCertFile" "/etc/platform-apiserver-tls/tls.crt" }}
{{- $_ := set $http "tlsKeyFile" "/etc/platform-apiserver-tls/tls.key" }}
{{- end }}
{{- $_ := set $config "http" $http }}
{{- $auth := get $config "auth" | default dict }}
{{- $_ := set $auth "signingAlgorithm" .Values.signingKeys.algorithm }}
{{- $_ := set $auth "signingKeyFile" (printf "/etc/platform-apiserver-keys/%s" (include "platform-apiserver.signingKeyName" .)) }}
{{- with .Values.signingKeys.verificationKeys }}
{{- $files := list }}
{{- range . }}{{ $files = append $files (printf "/etc/platform-apiserver-keys/%s" .) }}{{ end }}
{{- $_ := set $auth "verificationKeyFiles" $files }}
{{- end }}
{{- if .Values.admin.create }}
{{- $_ := set $auth "bootstrapAdmin" (dict "username" .Values.admin.username "passwordFile" "/etc/platform-apiserver-admin/password" "groups" .Values.admin.groups) }}
{{- end }}
{{- with include "platform-apiserver.externalBaseUrl" . }}
{{- $_ := set $auth "publicUrl" . }}
{{- end }}
{{- $_ := set $config "auth" $auth }}
{{- $election := get $config "leaderElection" | default dict }}
{{- $_ := set $election "leaseNamespace" .Release.Namespace }}
{{- $_ := set $config "leaderElection" $election }}
{{- if (get $config "logging" | default dict).password }}
{{- fail "config.logging.password: do not put the log store's password in the ConfigMap; name a Secret in logStore.passwordSecret" }}
{{- end }}
{{- if (get $config "auth" | default dict).clients }}
{{- fail "config.auth.clients: do not put OAuth client secrets in the ConfigMap; use oauth.clients or oauth.existingSecret (a Secret)" }}
{{- end }}
{{- with .Values.logStore.caSecret.name }}
{{- $logging := get $config "logging" | default dict }}
{{- $tls := get $logging "tls" | default dict }}
{{- $_ := set $tls "caFile" (printf "/etc/platform-apiserver-logging-ca/%s" $.Values.logStore.caSecret.key) }}
{{- $_ := set $logging "tls" $tls }}
{{- $_ := set $config "logging" $logging }}
{{- end }}
{{- toYaml $config }}
{{- end }}

{{/* http or https: how the server itself serves (probes, ServiceMonitor, NOTES). */}}
{{- define "platform-apiserver.scheme" -}}
{{- if .Values.tls.secretName }}https{{ else }}http{{ end }}
{{- end }}

{{/*
A CRD file of files/crds/ with its groups (iam.<platformName>.io, tenant.<platformName>.io) and the label
keys its printer columns show (<platformName>.io/…) following config.platformName. Takes {path, root}.
*/}}
{{- define "platform-apiserver.crdText" -}}
{{- $platform := .root.Values.config.platformName | default "platform" }}
{{- .root.Files.Get .path | replace "iam.platform.io" (include "platform-apiserver.iamGroup" .root) | replace "tenant.platform.io" (include "platform-apiserver.tenantGroup" .root) | replace "labels.platform\\.io/" (printf "labels.%s\\.io/" $platform) | replace "annotations.platform\\.io/" (printf "annotations.%s\\.io/" $platform) }}
{{- end }}

{{/*
The chart's CRDs, each with its group following config.platformName, and whether to render it:
a CRD is rendered when it does not exist yet or this release installed it; one installed by anyone
else (another owner such as the original system, or another release) is left alone. Returns a list
of {name, render, owner} dicts; `helm template` cannot look anything up and renders all.
*/}}
{{- define "platform-apiserver.crdPlan" -}}
{{- $plan := list }}
{{- range $path, $_ := .Files.Glob "files/crds/*.yaml" }}
{{- $crd := include "platform-apiserver.crdText" (dict "path" $path "root" $) | fromYaml }}
{{- $existing := lookup "apiextensions.k8s.io/v1" "CustomResourceDefinition" "" $crd.metadata.name }}
{{- $annotations := dig "metadata" "annotations" (dict) $existing }}
{{- $ours := and (eq (index $annotations "meta.helm.sh/release-name" | default "") $.Release.Name) (eq (index $annotations "meta.helm.sh/release-namespace" | default "") $.Release.Namespace) }}
{{- $owner := "" }}
{{- if and $existing (not $ours) }}
{{- $owner = index $annotations "meta.helm.sh/release-name" | default "" }}
{{- if $owner }}{{ $owner = printf "release %s/%s" (index $annotations "meta.helm.sh/release-namespace") $owner }}{{ else }}{{ $owner = "another owner (no ownership label of this chart)" }}{{ end }}
{{- end }}
{{- $plan = append $plan (dict "name" $crd.metadata.name "path" $path "render" (or (not $existing) $ours) "owner" $owner) }}
{{- end }}
{{- toJson $plan }}
{{- end }}
