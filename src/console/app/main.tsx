import { render } from 'preact';

render(<p>Tributary console</p>, document.getElementById('app')!);
