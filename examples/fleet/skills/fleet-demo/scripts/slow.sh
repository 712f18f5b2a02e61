#!/bin/sh
# Prints, works a second, prints again.
echo "slow $1 starting"
sleep 1
echo "slow $1 done"
