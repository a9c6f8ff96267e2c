{{/* Prefix of every object name. */}}
{{- define "svc.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "svc.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: svc
{{- end -}}

{{/*
Selector labels of one component's Pods ({{ include "svc.selector" (list $ "backend") }}). `app=<component>` is
what endpoint's discovery lists (components/endpoint/src/discovery.ts).
*/}}
{{- define "svc.selector" -}}
{{- $root := index . 0 -}}
app: {{ index . 1 }}
app.kubernetes.io/instance: {{ $root.Release.Name }}
{{- end -}}

{{/* The image of one service: <repository>/<service>:<tag>. */}}
{{- define "svc.image" -}}
{{- $root := index . 0 -}}
image: {{ printf "%s/%s:%s" $root.Values.image.repository (index . 1) ($root.Values.image.tag | default $root.Chart.AppVersion) | quote }}
imagePullPolicy: {{ $root.Values.image.pullPolicy }}
{{- end -}}

{{/* The leader label the elector writes on the leader's Pod (components/election leader-label.ts). */}}
{{- define "svc.leaderLabel" -}}
{{- printf "svc.ai/%s-leader" . -}}
{{- end -}}

{{/* Required settings, checked once. */}}
{{- define "svc.validate" -}}
{{- if not .Values.idp.issuer -}}
{{- fail "idp.issuer is required (SVC_AUTH_ISSUER, e.g. https://idp.example.com/realms/svc)" -}}
{{- end -}}
{{- if not .Values.kafka.brokers -}}
{{- fail "kafka.brokers is required (host:port[,host:port…] of the audit pipeline's Kafka)" -}}
{{- end -}}
{{- range $c := list "orchestrator" "backend" -}}
{{- $b := (index $.Values $c).election.backend -}}
{{- if ne $b "k8s-lease" -}}
{{- fail (printf "%s.election.backend must be k8s-lease in a cluster (got %q; postgres and single-node are the non-cluster backends)" $c $b) -}}
{{- end -}}
{{- end -}}
{{- range $c := list "compute" "shaper" -}}
{{- $b := (index $.Values $c).election.backend -}}
{{- if not (has $b (list "k8s-lease" "")) -}}
{{- fail (printf "%s.election.backend must be k8s-lease or \"\" (got %q)" $c $b) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Environment from a name → value map (extraEnv). */}}
{{- define "svc.extraEnv" -}}
{{- range $name, $value := . }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- end -}}

{{/* The Pod's identity and address, from the downward API: Lease holder, labelled Pod, advertised address. */}}
{{- define "svc.podEnv" -}}
- name: SVC_POD_NAME
  valueFrom: { fieldRef: { fieldPath: metadata.name } }
- name: SVC_ADVERTISE_HOST
  valueFrom: { fieldRef: { fieldPath: status.podIP } }
{{- end -}}

{{/* Service-to-service auth of the HA components and endpoint: issuer and the svc-components client's secret file. */}}
{{- define "svc.componentAuthEnv" -}}
- name: SVC_AUTH_ISSUER
  value: {{ .Values.idp.issuer | quote }}
- name: SVC_AUTH_CLIENT_ID
  value: {{ .Values.idp.componentsClient.id | quote }}
- name: SVC_AUTH_CLIENT_SECRET_FILE
  value: /etc/svc/idp/client-secret
{{- end -}}

{{- define "svc.componentAuthMount" -}}
- name: idp-client
  mountPath: /etc/svc/idp
  readOnly: true
{{- end -}}

{{- define "svc.componentAuthVolume" -}}
- name: idp-client
  secret:
    secretName: {{ .Values.idp.componentsClient.secretName }}
    defaultMode: 0440
    items:
      - key: {{ .Values.idp.componentsClient.secretKey }}
        path: client-secret
{{- end -}}

{{/* A value from the PostgreSQL Secret (the key given). */}}
{{- define "svc.pgUrl" -}}
{{- $root := index . 0 -}}
valueFrom:
  secretKeyRef:
    name: {{ $root.Values.postgres.secretName }}
    key: {{ index . 1 }}
{{- end -}}

{{/* S3 settings under a variable prefix (SVC_COMPONENTS_S3 or SVC_AUDIT_S3). */}}
{{- define "svc.s3Env" -}}
{{- $root := index . 0 -}}
{{- $p := index . 1 -}}
{{- with $root.Values.s3.endpoint }}
- name: {{ $p }}_ENDPOINT
  value: {{ . | quote }}
{{- end }}
- name: {{ $p }}_REGION
  value: {{ $root.Values.s3.region | quote }}
- name: {{ $p }}_FORCE_PATH_STYLE
  value: {{ $root.Values.s3.forcePathStyle | toString | quote }}
{{- if $root.Values.s3.secretName }}
- name: {{ $p }}_ACCESS_KEY
  valueFrom: { secretKeyRef: { name: {{ $root.Values.s3.secretName }}, key: {{ $root.Values.s3.accessKeyKey }} } }
- name: {{ $p }}_SECRET_KEY
  valueFrom: { secretKeyRef: { name: {{ $root.Values.s3.secretName }}, key: {{ $root.Values.s3.secretKeyKey }} } }
{{- end }}
{{- end -}}

{{/* HTTP probes on a named port: startup and liveness on `live`, readiness on `ready`. */}}
{{- define "svc.probes" -}}
{{- $root := index . 0 -}}
{{- $port := index . 1 -}}
{{- $live := index . 2 -}}
{{- $ready := index . 3 -}}
{{- $scheme := index . 4 -}}
{{- $p := $root.Values.probes -}}
startupProbe:
  httpGet: { path: {{ $live }}, port: {{ $port }}, scheme: {{ $scheme }} }
  periodSeconds: {{ $p.startup.periodSeconds }}
  failureThreshold: {{ $p.startup.failureThreshold }}
livenessProbe:
  httpGet: { path: {{ $live }}, port: {{ $port }}, scheme: {{ $scheme }} }
  periodSeconds: {{ $p.liveness.periodSeconds }}
  timeoutSeconds: {{ $p.liveness.timeoutSeconds }}
  failureThreshold: {{ $p.liveness.failureThreshold }}
readinessProbe:
  httpGet: { path: {{ $ready }}, port: {{ $port }}, scheme: {{ $scheme }} }
  periodSeconds: {{ $p.readiness.periodSeconds }}
  timeoutSeconds: {{ $p.readiness.timeoutSeconds }}
  failureThreshold: {{ $p.readiness.failureThreshold }}
{{- end -}}

{{/*
The audit agent as a native sidecar (restartPolicy Always in initContainers): it starts before the main container
and is stopped after it, so the last records written are shipped. Args: root, source file, topic, client id.
*/}}
{{- define "svc.agentSidecar" -}}
{{- $root := index . 0 -}}
- name: audit-agent
  {{- include "svc.image" (list $root "agent") | nindent 2 }}
  restartPolicy: Always
  env:
    - name: SVC_AGENT_SOURCE
      value: {{ index . 1 | quote }}
    - name: SVC_AGENT_CHECKPOINT_FILE
      value: /var/log/svc/audit/agent.checkpoint
    - name: SVC_AGENT_KAFKA_BROKERS
      value: {{ $root.Values.kafka.brokers | quote }}
    - name: SVC_AGENT_TOPIC
      value: {{ index . 2 | quote }}
    - name: SVC_AGENT_CLIENT_ID
      value: {{ index . 3 | quote }}
    - name: SVC_AGENT_METRICS_PORT
      value: {{ $root.Values.agent.metricsPort | quote }}
    - name: SVC_AGENT_METRICS_HOST
      value: "0.0.0.0"
    - name: SVC_AGENT_LOG_LEVEL
      value: {{ $root.Values.agent.logLevel | quote }}
    # Stopped after the main container, whose file goes with the Pod: read the rest of it first.
    - name: SVC_AGENT_STOP_READ_MS
      value: {{ $root.Values.agent.stopReadMs | int64 | quote }}
    - name: BUN_JSC_forceRAMSize
      value: {{ $root.Values.agent.jscRamBytes | int64 | quote }}
    {{- include "svc.extraEnv" $root.Values.agent.extraEnv | nindent 4 }}
  ports:
    - { name: agent-metrics, containerPort: {{ $root.Values.agent.metricsPort }} }
  # No startupProbe: the main container would wait for it, and the agent reports healthy only while shipping.
  # Liveness asks whether the process answers (/metrics), not /health: that is 503 while Kafka is away or the
  # checkpoint cannot be written, and a restart fixes neither (it only delays the catch-up). No readiness probe: a
  # sidecar's would take endpoint out of its Service while shipping stalls, and the file keeps the records.
  livenessProbe:
    httpGet: { path: /metrics, port: agent-metrics }
    initialDelaySeconds: 30
    periodSeconds: 10
    failureThreshold: 6
  securityContext: {{- toYaml $root.Values.containerSecurityContext | nindent 4 }}
  resources: {{- toYaml $root.Values.agent.resources | nindent 4 }}
  volumeMounts:
    - { name: audit, mountPath: /var/log/svc/audit }
    - { name: tmp, mountPath: /tmp }
{{- end -}}

{{/*
The emitter's size rotation of an audit log (SVC_AUDIT_LOG_ROTATE_*). Args: the audit values (rotateBytes,
rotateKeep, volumeSizeLimit in Mi or Gi) and their path for messages. Refuses a render whose rotated files
((keep + 1) × bytes) would not fit in the emptyDir: the kubelet evicts the Pod past its sizeLimit.
*/}}
{{- define "svc.auditRotationEnv" -}}
{{- $a := index . 0 -}}
{{- $at := index . 1 -}}
{{- $limit := toString $a.volumeSizeLimit -}}
{{- $limitBytes := 0 -}}
{{- if hasSuffix "Gi" $limit -}}{{- $limitBytes = mul (trimSuffix "Gi" $limit | int64) 1073741824 -}}
{{- else if hasSuffix "Mi" $limit -}}{{- $limitBytes = mul (trimSuffix "Mi" $limit | int64) 1048576 -}}
{{- else -}}{{- fail (printf "%s.volumeSizeLimit must be in Mi or Gi, got %s" $at $limit) -}}{{- end -}}
{{- if gt (int64 $a.rotateBytes) 0 -}}
{{- if ge (mul (add (int64 $a.rotateKeep) 1) (int64 $a.rotateBytes)) $limitBytes -}}
{{- fail (printf "%s: (rotateKeep + 1) × rotateBytes must be below volumeSizeLimit (%s)" $at $limit) -}}
{{- end -}}
- name: SVC_AUDIT_LOG_ROTATE_BYTES
  value: {{ $a.rotateBytes | int64 | quote }}
- name: SVC_AUDIT_LOG_ROTATE_KEEP
  value: {{ $a.rotateKeep | int64 | quote }}
{{- end -}}
{{- end -}}

{{/* Labels of one component's objects and Pods: the common ones and its selector labels. */}}
{{- define "svc.componentLabels" -}}
{{- $root := index . 0 -}}
helm.sh/chart: {{ printf "%s-%s" $root.Chart.Name $root.Chart.Version }}
app.kubernetes.io/managed-by: {{ $root.Release.Service }}
app.kubernetes.io/part-of: svc
{{ include "svc.selector" . }}
{{- end -}}
