package main

const sysSeccomp = 277
