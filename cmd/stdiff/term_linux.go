package main

import "syscall"

const getTermios = syscall.TCGETS
