{{- define "kevents.labels" -}}
app.kubernetes.io/name: kevents
app.kubernetes.io/part-of: kevents
{{- end -}}

{{- define "kevents.selector" -}}
app.kubernetes.io/component: archive
app.kubernetes.io/name: kevents
{{- end -}}

{{- define "kevents.containerSecurity" -}}
allowPrivilegeEscalation: false
capabilities:
  drop:
    - ALL
readOnlyRootFilesystem: true
{{- end -}}

{{- define "kevents.archiveUrlEnv" -}}
- name: KEVENTS_ARCHIVE_URL
  valueFrom:
    secretKeyRef:
      key: {{ .Values.archive.postgres.secretKey }}
      name: {{ .Values.archive.postgres.secretName }}
{{- end -}}
