// The conformance server's media and small helpers, shared by its modules
// (server.mjs): the image and audio the tools, resources and prompts answer
// with, text blocks, an empty input schema, and a pause.

// Media: a 2x2 PNG, and a WAV of 20 ms of a 440 Hz tone built at start.

export const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEUlEQVR4nGNgYPgPBCACyAIANdgH+Vq2rHoAAAAASUVORK5CYII=';

function wavBase64() {
  const rate = 8000;
  const samples = rate / 50;
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) {
    data.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), i * 2);
  }
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);      // fmt chunk size
  header.writeUInt16LE(1, 20);       // PCM
  header.writeUInt16LE(1, 22);       // mono
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28); // bytes per second
  header.writeUInt16LE(2, 32);       // block align
  header.writeUInt16LE(16, 34);      // bits per sample
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]).toString('base64');
}
export const WAV_BASE64 = wavBase64();

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export const text = (value) => ({ type: 'text', text: value });
export const NO_ARGUMENTS = { type: 'object', properties: {} };
