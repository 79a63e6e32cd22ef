#!/usr/bin/env bash
# Placeholder until the fuzz targets land: nothing to run yet.
echo "fuzz-smoke: no fuzz targets yet"
