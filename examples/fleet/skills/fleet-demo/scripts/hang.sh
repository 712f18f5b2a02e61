#!/bin/sh
# Sleeps past the skill's 3 s timeout.
echo "hang $1"
sleep 30
