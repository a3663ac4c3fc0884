/**
 * A value the client library passes through untouched. Before sending a request, the library
 * deep-copies its body twice (`extend`) and walks it to replace the text `{{projectId}}` in every
 * string (@google-cloud/projectify): for event rows that costs more than the rest of the write, and
 * it would rewrite that text inside users' data (a property value, or a property name kept in a
 * column description). An instance with only private fields is copied by reference and offers
 * nothing to walk; `JSON.stringify` sends `toJSON()`.
 */
export class Opaque<T> {
  readonly #value: T;

  constructor(value: T) {
    this.#value = value;
  }

  toJSON(): T {
    return this.#value;
  }
}
