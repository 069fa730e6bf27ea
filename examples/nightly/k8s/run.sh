#!/usr/bin/env bash
# One night on Kubernetes: the shards as an Indexed Job, then the merge Job once every shard finished
# (or failed: the merge names a missing shard). Needs kubectl pointed at the cluster, the PVCs
# faultline-sessions (made by faultline-shards.yaml) and faultline-source (faultline's checkout).
set -euo pipefail
cd "$(dirname "$0")"
RUN_ID=${RUN_ID:-$(date -u +%Y-%m-%dT%H-%M-%SZ)}
kubectl delete job faultline-shards faultline-merge --ignore-not-found
sed "s/RUN_ID_PLACEHOLDER/$RUN_ID/" faultline-shards.yaml | kubectl apply -f -
# Complete or failed, whichever comes first (a failed shard pod still leaves its session to merge).
kubectl wait --for=condition=complete --timeout=3h job/faultline-shards &
kubectl wait --for=condition=failed --timeout=3h job/faultline-shards &
wait -n || true
sed "s/RUN_ID_PLACEHOLDER/$RUN_ID/" faultline-merge.yaml | kubectl apply -f -
kubectl wait --for=condition=complete --timeout=1h job/faultline-merge || true
kubectl logs job/faultline-merge
test "$(kubectl get job faultline-merge -o jsonpath='{.status.succeeded}')" = 1
