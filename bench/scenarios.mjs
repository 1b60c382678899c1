// Benchmark scenarios. Each: { name, title, path, expect: { status, bodyLength }, headers?(ctx) } where
// headers() may ask the server under test for something first (e.g. the ETag it gives /index.html) and
// throws to mark the scenario as not runnable for that server. Reference servers (the node ceiling) are
// sent `referenceHeaders` instead and always expected to answer 200 with their constant 1 KB.
import { FIXTURE } from './lib/fixture.mjs';

export const REFERENCE_EXPECT = { status: 200, bodyLength: 1024 };

export const scenarios = [
  {
    name: '1k',
    title: `GET ${FIXTURE.small.path} -> 200, 1 KB`,
    path: FIXTURE.small.path,
    expect: { status: 200, bodyLength: FIXTURE.small.size },
  },
  {
    name: '304',
    title: `GET ${FIXTURE.html.path} + If-None-Match -> 304`,
    path: FIXTURE.html.path,
    expect: { status: 304, bodyLength: 0 },
    referenceHeaders: { 'If-None-Match': '"reference"' },
    async headers({ probe }) {
      const res = await probe({ path: FIXTURE.html.path });
      if (res.status !== 200) throw new Error(`GET ${FIXTURE.html.path} gave ${res.status}, not 200`);
      const etag = res.headers.etag;
      if (!etag) throw new Error(`GET ${FIXTURE.html.path} had no ETag`);
      return { 'If-None-Match': etag };
    },
  },
  {
    name: '150k',
    title: `GET ${FIXTURE.large.path} -> 200, 150 KB identity`,
    path: FIXTURE.large.path,
    expect: { status: 200, bodyLength: FIXTURE.large.size },
  },
];
