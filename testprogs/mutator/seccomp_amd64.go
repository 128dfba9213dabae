package main

const sysSeccomp = 317
