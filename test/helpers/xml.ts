/**
 * A strict parser of the XML the tests read (feeds): elements, attributes, text, the five predefined entities and
 * numeric character references, an optional XML declaration, comments. Anything not well formed throws, naming
 * where. No DTDs, CDATA or processing instructions beyond the declaration: a document with them is refused.
 */
export type XmlElement = { name: string; attributes: Record<string, string>; children: XmlElement[]; text: string };

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const NAME = /^[A-Za-z_][\w.-]*(:[A-Za-z_][\w.-]*)?/;

function decode(raw: string, at: number): string {
  if (/[<]/.test(raw)) throw new Error(`"<" in text or an attribute at ${at}`);
  return raw.replace(/&([^;]*);?/g, (all, name: string) => {
    if (!all.endsWith(';')) throw new Error(`an & that starts no reference at ${at}`);
    if (name in ENTITIES) return ENTITIES[name] as string;
    const num = /^#(x[0-9A-Fa-f]+|\d+)$/.exec(name);
    if (!num) throw new Error(`unknown entity &${name}; at ${at}`);
    const code = num[1]!.startsWith('x') ? parseInt(num[1]!.slice(1), 16) : Number(num[1]);
    return String.fromCodePoint(code);
  });
}

export function parseXml(xml: string): XmlElement {
  let i = 0;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/.test(xml)) throw new Error('a character XML 1.0 does not allow');
  const skipMisc = () => {
    for (;;) {
      while (/\s/.test(xml[i] ?? '')) i++;
      if (xml.startsWith('<!--', i)) {
        const end = xml.indexOf('-->', i);
        if (end < 0) throw new Error(`an unclosed comment at ${i}`);
        i = end + 3;
      } else return;
    }
  };
  if (xml.startsWith('<?xml', 0)) {
    const end = xml.indexOf('?>');
    if (end < 0) throw new Error('an unclosed XML declaration');
    i = end + 2;
  }
  skipMisc();
  const element = (): XmlElement => {
    if (xml[i] !== '<') throw new Error(`expected an element at ${i}`);
    i++;
    const name = NAME.exec(xml.slice(i, i + 200))?.[0];
    if (!name) throw new Error(`a bad element name at ${i}`);
    i += name.length;
    const el: XmlElement = { name, attributes: {}, children: [], text: '' };
    for (;;) {
      const ws = /^\s*/.exec(xml.slice(i, i + 100))![0].length;
      i += ws;
      if (xml.startsWith('/>', i)) {
        i += 2;
        return el;
      }
      if (xml[i] === '>') {
        i++;
        break;
      }
      if (ws === 0) throw new Error(`expected whitespace before an attribute at ${i}`);
      const attr = NAME.exec(xml.slice(i, i + 200))?.[0];
      if (!attr) throw new Error(`a bad attribute name at ${i}`);
      i += attr.length;
      const m = /^\s*=\s*("([^"]*)"|'([^']*)')/.exec(xml.slice(i));
      if (!m) throw new Error(`attribute ${attr} has no quoted value at ${i}`);
      if (attr in el.attributes) throw new Error(`attribute ${attr} repeated at ${i}`);
      el.attributes[attr] = decode(m[2] ?? m[3] ?? '', i);
      i += m[0].length;
    }
    let text = '';
    for (;;) {
      if (i >= xml.length) throw new Error(`element ${name} is not closed`);
      if (xml.startsWith('</', i)) {
        const m = /^<\/([^\s>]+)\s*>/.exec(xml.slice(i, i + 300));
        if (!m || m[1] !== name) throw new Error(`</${m?.[1]}> closes <${name}> at ${i}`);
        i += m[0].length;
        el.text = decode(text, i);
        return el;
      }
      if (xml.startsWith('<!--', i)) {
        skipMisc();
        continue;
      }
      if (xml.startsWith('<!', i) || xml.startsWith('<?', i)) throw new Error(`markup this parser does not take at ${i}`);
      if (xml[i] === '<') {
        el.children.push(element());
        continue;
      }
      const next = xml.indexOf('<', i);
      text += xml.slice(i, next < 0 ? xml.length : next);
      i = next < 0 ? xml.length : next;
    }
  };
  const root = element();
  skipMisc();
  if (i !== xml.length) throw new Error(`content after the root element at ${i}`);
  return root;
}
