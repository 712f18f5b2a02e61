#!/bin/sh
# Summarise a terraform plan by action.
set -eu
terraform plan -input=false -out=plan.out >/dev/null
terraform show -json plan.out | jq -r '.resource_changes[] | .change.actions | join(",")' | sort | uniq -c
