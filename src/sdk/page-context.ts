type Props = Record<string, unknown>;

const UTM = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'];

/** The UTM parameters of the page's URL that are present. */
export function utmParameters(): Props {
  const found: Props = {};
  const params = new URLSearchParams(location.search);
  for (const name of UTM) {
    const value = params.get(name);
    if (value !== null) found[name] = value;
  }
  return found;
}

/** A `page_view`'s properties: where the visitor is and came from. */
export function pageProperties(referrer: string): Props {
  return { url: location.href, path: location.pathname, title: document.title, referrer, ...utmParameters() };
}

/** A new session's properties: how the visitor arrived, and with what. */
export function sessionProperties(): Props {
  return {
    landing_page: location.href,
    referrer: document.referrer,
    ...utmParameters(),
    language: navigator.language,
    screen: `${screen.width}x${screen.height}`,
  };
}

/** The URL without its fragment: a change of it is a navigation. */
export function currentPage(): string {
  return location.href.split('#')[0]!;
}
