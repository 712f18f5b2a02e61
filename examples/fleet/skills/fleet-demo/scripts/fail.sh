#!/bin/sh
# Fails with exit status 2.
echo "fail $1" >&2
exit 2
