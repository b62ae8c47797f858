/**
 * Plain text from a summary as the extractor reads it: the same for a PDF's text layer and for an OCR'd Markdown copy.
 * Table markup becomes line breaks and spaces (a PDF has no markup, so no rule may depend on it), Markdown heading
 * marks and emphasis go, entities are decoded, and runs of spaces become one.
 */
export function plainText(raw: string): string {
  return raw
    .replace(/\r\n?/g, '\n')
    .replace(/<br\s*\/?>|<\/(?:tr|p|div|table|thead|tbody|li|h\d)>|<(?:table|tr|p|div|li|h\d)(?:\s[^>]*)?>/gi, '\n')
    .replace(/<\/?(?:td|th)(?:\s[^>]*)?>/gi, '  ')
    .replace(/<[^>\n]{0,200}>/g, ' ')
    .replace(/&nbsp;|&#160;/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/^[ \t]*#{1,6}[ \t]+/gm, '')
    .replace(/\*\*|__/g, '')
    .replace(/[ \t\u00a0]+/g, ' ')
    .replace(/ *\n */g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
