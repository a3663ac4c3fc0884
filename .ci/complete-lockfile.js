#!/usr/bin/env node
'use strict';
/**
 * The package registry this project is built against does not serve every platform build of
 * packages such as @duckdb/node-bindings-*; `npm install` then leaves those optional packages out
 * of package-lock.json and `npm ci` refuses the lock as out of sync. This adds a placeholder entry
 * (version, optional, os/cpu from the package name) for each such package. On this platform npm
 * skips them; on another platform npm fetches the real package by that exact version.
 * Run after any dependency change: `npm run lock:complete`.
 */
const fs = require('node:fs');
const path = require('node:path');
const semver = require('semver');

const OS = ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openharmony', 'sunos', 'aix'];
const CPU = { arm64: 'arm64', x64: 'x64', ia32: 'ia32', arm: 'arm', loong64: 'loong64', ppc64: 'ppc64', riscv64: 'riscv64', s390x: 's390x' };

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => OS.includes(p));
  const cpu = parts.map((p) => CPU[p]).find(Boolean);
  const libc = parts.includes('musl') || parts.includes('musleabihf') ? 'musl' : parts.includes('gnu') || parts.includes('gnueabihf') ? 'glibc' : undefined;
  return { os, cpu, libc };
}

const file = path.join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
const added = [];
for (const [where, pkg] of Object.entries(lock.packages)) {
  for (const [name, spec] of Object.entries(pkg.optionalDependencies ?? {})) {
    const nested = `${where ? `${where}/` : ''}node_modules/${name}`;
    if (lock.packages[nested] || lock.packages[`node_modules/${name}`]) continue;
    const { os, cpu, libc } = platformOf(name);
    const version = semver.valid(spec) ?? semver.minVersion(spec)?.version;
    if (!os || !cpu || !version) continue;
    lock.packages[`node_modules/${name}`] = { version, cpu: [cpu], license: 'UNKNOWN', optional: true, os: [os], ...(libc ? { libc: [libc] } : {}) };
    added.push(`${name}@${version}`);
  }
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(added.length ? `complete-lockfile: added ${added.length} platform placeholders\n` : 'complete-lockfile: nothing to add\n');
