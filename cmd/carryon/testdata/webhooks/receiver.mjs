// A webhook receiver for TestWebhooksNodeReceiver: it verifies every delivery with the
// standardwebhooks npm package and prints each verified one as a JSON line on stdout
// ({"id", "type", "run_id", "status"}); a delivery that fails verification is answered 401 and
// printed as {"bad": reason}. The first line is {"port": n}. The test drives it through its
// control routes: POST /_secret (the body is the secret), POST /_down (answer 503 from now on),
// POST /_up.
//
// usage: node receiver.mjs PATH/TO/standardwebhooks/dist/index.js
import { createRequire } from "node:module";
import http from "node:http";

const require = createRequire(import.meta.url);
const { Webhook } = require(process.argv[2]);

let wh = null;
let down = false;

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    if (req.url === "/_secret") {
      wh = new Webhook(body);
      res.writeHead(204).end();
      return;
    }
    if (req.url === "/_down" || req.url === "/_up") {
      down = req.url === "/_down";
      res.writeHead(204).end();
      return;
    }
    if (down) {
      res.writeHead(503, { "content-type": "text/plain" }).end("down for maintenance");
      return;
    }
    try {
      if (wh === null) throw new Error("no secret yet");
      const p = wh.verify(body, req.headers);
      console.log(JSON.stringify({ id: req.headers["webhook-id"], type: p.type, run_id: p.data.run_id, status: p.data.status }));
      res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
    } catch (e) {
      console.log(JSON.stringify({ bad: String(e && e.message ? e.message : e) }));
      res.writeHead(401).end("bad signature");
    }
  });
});
server.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ port: server.address().port })));
