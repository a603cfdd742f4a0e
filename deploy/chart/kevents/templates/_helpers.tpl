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

{{- /* The database URL goes into the containers' argv, where every process listing shows it: it may hold no password. */ -}}
{{- define "kevents.archiveUrl" -}}
{{- $url := required "archive.postgres.url is the database, postgres://USER@HOST:5432/DB" .Values.archive.postgres.url -}}
{{- if regexMatch "^[^:/?#]+://[^/?#@]*:[^/?#@]*@" $url -}}
{{- fail "archive.postgres.url holds a password, which every process listing would show: give the URL without it and the password in the Secret archive.postgres.secretName (key archive.postgres.secretKey)" -}}
{{- end -}}
{{- $url -}}
{{- end -}}

{{- define "kevents.passwordMount" -}}
- name: postgres-password
  mountPath: /etc/kevents/postgres
  readOnly: true
{{- end -}}
