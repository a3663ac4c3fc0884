import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from './api.js';

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload: () => Promise<void>;
  setData: (data: T) => void;
}

/**
 * Loads `fetcher()` when `key` changes, and again every `intervalMs` when given. A refresh that
 * fails keeps the last data and shows the error; answers that arrive after a newer request are dropped.
 */
export function useLoad<T>(fetcher: () => Promise<T>, key: string, intervalMs?: number): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const fetcherRef = useRef(fetcher);
  fetcherRef.current = fetcher;

  const reload = useCallback(async () => {
    const mine = ++generation.current;
    try {
      const value = await fetcherRef.current();
      if (mine !== generation.current) return;
      setData(value);
      setError(null);
    } catch (err) {
      if (mine !== generation.current) return;
      setError(messageOf(err));
    } finally {
      if (mine === generation.current) setLoading(false);
    }
  }, []);

  useEffect(() => {
    setData(undefined);
    setLoading(true);
    void reload();
    return () => {
      generation.current++;
    };
  }, [key]);

  useEffect(() => {
    if (!intervalMs) return;
    let busy = false;
    const timer = setInterval(async () => {
      // A slow answer must not pile up requests behind it.
      if (busy || document.hidden) return;
      busy = true;
      try {
        await reload();
      } finally {
        busy = false;
      }
    }, intervalMs);
    return () => clearInterval(timer);
  }, [key, intervalMs]);

  return { data, error, loading, reload, setData };
}

export interface Action {
  busy: boolean;
  error: string | null;
  status: string | null;
  /** Runs `action` with the form busy; shows `done` once it succeeds, its error otherwise. Whether it succeeded. */
  run: (action: () => Promise<unknown>, done: string) => Promise<boolean>;
}

/** One button's (or one form's) action: busy while it runs, then a status line or an error. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const run = async (action: () => Promise<unknown>, done: string): Promise<boolean> => {
    setBusy(true);
    setError(null);
    setStatus(null);
    try {
      await action();
      setStatus(done);
      return true;
    } catch (err) {
      setError(messageOf(err));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, status, run };
}
