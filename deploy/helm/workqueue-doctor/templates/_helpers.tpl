{{/*
Names, labels and the pieces every template shares. Checks that span several values run in
"workqueue-doctor.validate"; the types of the values are checked by values.schema.json before any template runs.
*/}}

{{/* The chart name, or nameOverride. */}}
{{- define "workqueue-doctor.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The name of the release's objects: fullnameOverride, or the release name with the chart name (once). */}}
{{- define "workqueue-doctor.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The name of the release's cluster-scoped objects: with the namespace, so releases in two namespaces differ. */}}
{{- define "workqueue-doctor.clusterName" -}}
{{- printf "%s-%s" (include "workqueue-doctor.fullname" .) .Release.Namespace }}
{{- end }}

{{- define "workqueue-doctor.selectorLabels" -}}
app.kubernetes.io/name: {{ include "workqueue-doctor.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "workqueue-doctor.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "workqueue-doctor.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The service's pods and the Service in front of them (as deploy/standalone labels them). */}}
{{- define "workqueue-doctor.serverSelectorLabels" -}}
{{ include "workqueue-doctor.selectorLabels" . }}
app.kubernetes.io/component: server
{{- end }}

{{- define "workqueue-doctor.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "workqueue-doctor.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name: give the existing service account to run as (serviceAccount.create is false)" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* repository@digest when a digest is given, else repository:tag (default the chart's appVersion). */}}
{{- define "workqueue-doctor.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/* The port the service listens on in its container (the image's EXPOSE, `listen`'s default). */}}
{{- define "workqueue-doctor.containerPort" -}}
9808
{{- end }}

{{/* The configuration file's directory and name in the container. */}}
{{- define "workqueue-doctor.configDir" -}}
/etc/workqueue-doctor
{{- end }}

{{/* config.state.dir in mode standalone, or nothing (the service keeps no history from a Prometheus). */}}
{{- define "workqueue-doctor.stateDir" -}}
{{- if eq .Values.mode "standalone" }}
{{- with .Values.config.state }}{{ .dir | default "" }}{{ end }}
{{- end }}
{{- end }}

{{/*
The configuration file: the `config` value with the keys the chart owns. `listen` is the container's port; the
source is the mode's: standalone turns Kubernetes discovery on, prometheus reads config.prometheus.url. The
values schema already refuses `listen`, `targets` and `kubernetes.enabled` in `config`.
*/}}
{{- define "workqueue-doctor.config" -}}
{{- $config := deepCopy .Values.config }}
{{- $prometheus := $config.prometheus | default dict }}
{{- if eq .Values.mode "prometheus" }}
{{- if not $prometheus.url }}
{{- fail "mode prometheus runs the diagnoses against a Prometheus: set config.prometheus.url (e.g. http://prometheus-operated.monitoring.svc:9090)" }}
{{- end }}
{{- else }}
{{- if $prometheus.url }}
{{- fail "config.prometheus.url is read in mode prometheus only: set mode: prometheus, or remove it (mode standalone discovers pods)" }}
{{- end }}
{{- $kubernetes := $config.kubernetes | default dict }}
{{- $_ := set $kubernetes "enabled" true }}
{{- $_ := set $config "kubernetes" $kubernetes }}
{{- end }}
{{- $_ := set $config "listen" (printf "0.0.0.0:%s" (include "workqueue-doctor.containerPort" .)) }}
{{- toYaml $config }}
{{- end }}

{{/* Checks across values; fails naming the values and what to do. */}}
{{- define "workqueue-doctor.validate" -}}
{{- if eq .Values.mode "prometheus" }}
{{- if .Values.rbac.namespaced }}
{{- fail "rbac.namespaced applies to mode standalone (pod discovery); mode prometheus reads nothing from the Kubernetes API" }}
{{- end }}
{{- if .Values.rbac.metricsReader }}
{{- fail "rbac.metricsReader applies to mode standalone (it lets the service read the pods' protected /metrics); mode prometheus scrapes no pod" }}
{{- end }}
{{- else }}
{{- $kubernetes := .Values.config.kubernetes | default dict }}
{{- if and (not .Values.serviceAccount.automountToken) (not $kubernetes.kubeconfig) }}
{{- fail "mode standalone reads pods with the service account's token: keep serviceAccount.automountToken true (or give config.kubernetes.kubeconfig)" }}
{{- end }}
{{- end }}
{{- if and .Values.serviceMonitor.enabled .Values.podMonitor.enabled }}
{{- fail "enable serviceMonitor or podMonitor, not both: each scrapes the same pod, so every series would be stored twice" }}
{{- end }}
{{- range $index, $mount := .Values.secretMounts }}
{{- if has $mount.name (list "config" "state") }}
{{- fail (printf "secretMounts[%d].name: %q is the name of a volume of the chart; choose another" $index $mount.name) }}
{{- end }}
{{- end }}
{{- end }}

{{/* The one rule of pod discovery: get, list and watch pods. */}}
{{- define "workqueue-doctor.podDiscoveryRules" -}}
- apiGroups:
    - ""
  resources:
    - pods
  verbs:
    - get
    - list
    - watch
{{- end }}

{{/*
config.kubernetes.namespaces as a JSON list (the file may give a list or one comma-separated string), for
rbac.namespaced; fails when there are none, since watching every namespace needs the ClusterRole.
*/}}
{{- define "workqueue-doctor.watchedNamespaces" -}}
{{- $given := (.Values.config.kubernetes | default dict).namespaces | default list }}
{{- if kindIs "string" $given }}
{{- $given = splitList "," $given }}
{{- end }}
{{- $namespaces := list }}
{{- range $given }}
{{- if trim . }}
{{- $namespaces = append $namespaces (trim .) }}
{{- end }}
{{- end }}
{{- if not $namespaces }}
{{- fail "rbac.namespaced grants pod access in each watched namespace: list them in config.kubernetes.namespaces (none watches every namespace, which needs the ClusterRole)" }}
{{- end }}
{{- toJson $namespaces }}
{{- end }}
