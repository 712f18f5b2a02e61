#!/bin/sh
# Prints its arguments at once.
echo "fast $*"
