#!/bin/sh
# Writes out-N.txt in the working directory.
echo "written by call $1" > "out-$1.txt"
echo "wrote out-$1.txt"
