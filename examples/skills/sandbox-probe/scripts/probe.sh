#!/bin/bash
# Try a few escapes and report which ones the sandbox denied
try() {
  local what=$1; shift
  if out=$("$@" 2>&1); then echo "ALLOWED  $what"; else echo "denied   $what: ${out##*: }"; fi
}
try "read \$HOME"            ls "$HOME"
try "read /etc/shadow"       head -c1 /etc/shadow
try "write /var/tmp"         sh -c 'echo x > /var/tmp/skillhost-probe.$$ && rm -f /var/tmp/skillhost-probe.$$'
try "write into the skill"   sh -c "echo x > '$(dirname "$0")/planted' && rm -f '$(dirname "$0")/planted'"
try "write ./out (granted)"  sh -c 'mkdir -p out && echo ok > out/probe.txt'
try "TCP to 127.0.0.1:22"    bash -c 'exec 3<>/dev/tcp/127.0.0.1/22'
try "read host environment"  head -c 64 /proc/1/environ
echo "env: $(env | wc -l) variables: $(env | cut -d= -f1 | sort | tr '\n' ' ')"
