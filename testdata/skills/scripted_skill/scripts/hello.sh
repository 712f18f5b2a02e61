#!/usr/bin/env bash
# Say hello to the world
echo "Hello from AgentSkills script!"
