#!/usr/bin/env node
// The installed `ptlab` command: runs the compiled CLI (npm run build makes dist/).
import('../dist/harness/cli/ptlab.js');
