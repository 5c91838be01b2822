package main

// encodeSupported turns on the encode conformance cases once re-encoding exists.
const encodeSupported = false
