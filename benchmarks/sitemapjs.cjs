/*
 * The sitemap.js contender of `python -m benchmarks build` (npm package `sitemap`, 9.x), run as
 * its own child process so its CPU time and peak RSS are its own:
 *
 *     node benchmarks/sitemapjs.cjs FEED OUT PREFIX
 *
 * FEED is the benchmark's JSON-lines feed, OUT the output folder, PREFIX the folder the harness
 * ran `npm install --prefix` in (benchmarks/out/sitemapjs, outside this file's module path).
 *
 * The package's streaming API as its README documents it ("Create sitemap and index files from
 * one large list", "Want to customize that?"): the feed read with
 * lineSeparatedURLsToSitemapOptions, one SitemapAndIndexStream per origin (scheme + host +
 * port, as the other contenders split), whose getSitemapStream pipes a SitemapStream through
 * zlib's createGzip (its default level, 6) into OUT/<origin folder>/sitemap-<i>.xml.gz, every
 * 50,000 URLs (`limit`; the package defaults to 45,000); the index piped through createGzip
 * into sitemap-index.xml.gz, as in the README. The index names each file with its `.gz`, the
 * README's variant for servers that do not map sitemap.xml to sitemap.xml.gz.
 *
 * The only adaptation of a record is the one the package's item options need: `loc` is `url`,
 * `images` (a list of URLs) is `img`, and a priority given as a string becomes a number (the
 * package writes it with toFixed). No deduplication, as in the bare loop: one <url> a record.
 * The feed interleaves the origins, so the loop honours each stream's backpressure itself.
 *
 * CommonJS, the README's other documented form: it finds the package under PREFIX with
 * require.resolve's `paths`, which an ES module import cannot be given.
 */
'use strict';

const { createReadStream, createWriteStream, mkdirSync } = require('node:fs');
const { once } = require('node:events');
const { join } = require('node:path');
const { pipeline } = require('node:stream/promises');
const { createGzip } = require('node:zlib');

const MAX_URLS = 50000;

const [feedPath, outDir, prefix] = process.argv.slice(2);
if (!prefix) {
  console.error('usage: node sitemapjs.cjs FEED OUT PREFIX');
  process.exit(2);
}
const {
  SitemapAndIndexStream,
  SitemapStream,
  lineSeparatedURLsToSitemapOptions,
} = require(require.resolve('sitemap', { paths: [prefix] }));

/** scheme://host[:port] of an absolute URL, as contenders.py's _origin splits it. */
function originOf(loc) {
  const start = loc.indexOf('://') + 3;
  const end = loc.indexOf('/', start);
  return end < 0 ? loc : loc.slice(0, end);
}

/** One origin's SitemapAndIndexStream, and the promise of its index written to disk. */
function openOrigin(origin) {
  const folder = join(outDir, origin.replace('://', '_').replaceAll(':', '_'));
  mkdirSync(folder, { recursive: true });
  const sms = new SitemapAndIndexStream({
    limit: MAX_URLS,
    getSitemapStream: (i) => {
      const sitemapStream = new SitemapStream({ hostname: origin });
      const path = `./sitemap-${i}.xml.gz`;
      const ws = sitemapStream
        .pipe(createGzip()) // compress the output of the sitemap
        .pipe(createWriteStream(join(folder, path)));
      return [new URL(path, `${origin}/`).toString(), sitemapStream, ws];
    },
  });
  // pipeline, not .pipe: the same chain as the README's, and an error anywhere rejects.
  const written = pipeline(sms, createGzip(), createWriteStream(join(folder, 'sitemap-index.xml.gz')));
  return { sms, written };
}

function item(record) {
  const smi = { url: record.loc };
  if (record.lastmod) smi.lastmod = record.lastmod;
  if (record.changefreq) smi.changefreq = record.changefreq;
  if (record.priority !== undefined && record.priority !== null) smi.priority = Number(record.priority);
  if (record.images && record.images.length) smi.img = record.images;
  return smi;
}

async function main() {
  const origins = new Map();
  let urls = 0;
  const records = lineSeparatedURLsToSitemapOptions(createReadStream(feedPath), { isJSON: true });
  for await (const record of records) {
    const origin = originOf(record.loc);
    let target = origins.get(origin);
    if (target === undefined) {
      target = openOrigin(origin);
      origins.set(origin, target);
    }
    if (!target.sms.write(item(record))) {
      await once(target.sms, 'drain');
    }
    urls += 1;
  }
  for (const { sms } of origins.values()) {
    sms.end(); // necessary to let it know you've got nothing else to write
  }
  await Promise.all([...origins.values()].map(({ written }) => written));
  console.log(urls);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
