/**
 * What a YAML syntax error says, from its code alone. yaml's own messages sometimes quote the source (the
 * rest of a block-scalar header, an escape sequence, a tag), and a config line may hold a secret, so only
 * these fixed texts are shown, with the code for searching yaml's documentation.
 */
import type { YAMLError } from 'yaml';

const TEXT: Record<YAMLError['code'], string> = {
  ALIAS_PROPS: 'an alias cannot have an anchor or a tag',
  BAD_ALIAS: 'invalid alias',
  BAD_DIRECTIVE: 'invalid directive',
  BAD_DQ_ESCAPE: 'invalid escape sequence in a double-quoted string',
  BAD_INDENT: 'bad indentation (or an unclosed flow collection)',
  BAD_PROP_ORDER: 'anchors and tags must come after the indicator',
  BAD_SCALAR_START: 'a plain value cannot start with this character (quote it)',
  BLOCK_AS_IMPLICIT_KEY: 'a nested mapping or list cannot be a key on one line',
  BLOCK_IN_FLOW: 'a block collection cannot be inside a flow collection',
  DUPLICATE_KEY: 'duplicate key',
  IMPOSSIBLE: 'the YAML parser reached an impossible state',
  KEY_OVER_1024_CHARS: 'an implicit key is longer than 1024 characters',
  MISSING_CHAR: 'a required character is missing (a comma, colon or closing bracket)',
  MULTILINE_IMPLICIT_KEY: 'an implicit key must be on a single line',
  MULTIPLE_ANCHORS: 'a node can have only one anchor',
  MULTIPLE_DOCS: 'the file must contain exactly one YAML document',
  MULTIPLE_TAGS: 'a node can have only one tag',
  NON_STRING_KEY: 'keys must be strings',
  RESOURCE_EXHAUSTION: 'the document expands to too much data',
  TAB_AS_INDENT: 'tabs cannot be used for indentation',
  TAG_RESOLVE_FAILED: 'unknown or invalid tag',
  UNEXPECTED_TOKEN: 'unexpected token',
  BAD_COLLECTION_TYPE: 'the tag does not fit this kind of collection',
};

export function yamlErrorText(code: YAMLError['code']): string {
  return `YAML syntax error (${code}): ${TEXT[code] ?? 'invalid YAML'}`;
}
