#!/bin/sh
# Fixture (test_measure): prints garbage, control characters included.
printf 'step time: \033[31m1.5\033[0m s\001\002 caf\303\251\n'
