'use strict';
// Preloaded (--require) into a CLI process by startup.test.ts: at exit, writes how many TCP
// connections the process opened to $CONNECTIONS_FILE. Pipes (tsx talks to its parent over one)
// are not counted.
const fs = require('node:fs');
const net = require('node:net');
let opened = 0;
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  const target = Array.isArray(args[0]) ? args[0][0] : args[0];
  if (typeof target === 'number' || (typeof target === 'object' && target !== null && target.port !== undefined)) opened += 1;
  return connect.apply(this, args);
};
process.on('exit', () => {
  fs.writeFileSync(process.env.CONNECTIONS_FILE, String(opened));
});
