import { useEffect } from 'preact/hooks';

/**
 * Names the page in the title bar. When `screen` changes, focus moves to the page's heading, so a
 * screen reader announces the new screen (hash navigation does not reload the page); switching
 * tabs within a screen keeps focus on the tab that was chosen.
 */
export function usePageTitle(title: string, screen: string = title): void {
  useEffect(() => {
    document.title = `${title} · Tributary`;
  }, [title]);
  useEffect(() => {
    const heading = document.querySelector<HTMLElement>('main [data-autofocus]');
    if (heading && !heading.contains(document.activeElement)) heading.focus({ preventScroll: true });
  }, [screen]);
}
