import { useEffect, useRef, useState } from 'preact/hooks';
import type { RefObject } from 'preact';
import { ApiError, messageOf } from './api.js';

export type FieldErrors = Record<string, string>;

export interface FormErrors {
  /** Errors shown under their fields, by field key. */
  fields: FieldErrors;
  /** An error no field of the form owns, shown above the buttons. */
  form: string | null;
  /** Shows an error from the server under the field it names, when the form has that field. */
  fail: (err: unknown, fieldKey: (field: string) => string | undefined) => void;
  setFields: (errors: FieldErrors) => void;
  clear: () => void;
}

/**
 * Under its field, a refusal reads without the field's path the server puts in front of it:
 * `Invalid google-sheets settings: settings.spreadsheetId: a spreadsheet id is…` → `a spreadsheet id is…`.
 */
export function fieldMessage(err: ApiError): string {
  const marker = `${err.field}: `;
  const at = err.field ? err.message.indexOf(marker) : -1;
  return at < 0 ? err.message : err.message.slice(at + marker.length);
}

/** Form errors that move focus to the first invalid control, so keyboard and screen reader users land on it. */
export function useFormErrors(formRef: RefObject<HTMLFormElement | null>): FormErrors {
  const [fields, setFieldsState] = useState<FieldErrors>({});
  const [form, setForm] = useState<string | null>(null);
  const focusPending = useRef(false);

  useEffect(() => {
    if (!focusPending.current) return;
    focusPending.current = false;
    formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [fields]);

  return {
    fields,
    form,
    fail: (err, fieldKey) => {
      const key = err instanceof ApiError && err.field ? fieldKey(err.field) : undefined;
      if (key) {
        focusPending.current = true;
        setFieldsState({ [key]: fieldMessage(err as ApiError) });
        setForm(null);
      } else {
        setFieldsState({});
        setForm(messageOf(err));
      }
    },
    setFields: (errors) => {
      focusPending.current = Object.keys(errors).length > 0;
      setFieldsState(errors);
      setForm(null);
    },
    clear: () => {
      setFieldsState({});
      setForm(null);
    },
  };
}
